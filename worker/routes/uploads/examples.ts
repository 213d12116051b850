/**
 * Examples the OpenAPI document shows for the upload operations. A request example and the
 * response example it leads to share a name; test/api/openapi-replay.test.ts replays every
 * request example against the running service, with real uploads standing in for these ids.
 */
import { MAX_PENDING_UPLOADS, MAX_UPLOAD_BYTES, UPLOAD_STORAGE_BYTES } from "../../../domain/plans";
import { partSizeFor, planParts, UPLOAD_TYPES_TEXT } from "../../../domain/uploads";
import { ApiError } from "../../errors";
import {
  partsMissing,
  pendingUploadsCapped,
  singleUploadCompletes,
  sizeOverPlan,
  uploadExpired,
  uploadNotFound,
  uploadStorageFull,
} from "../../lib/refusals";

/** One id per kind of upload an example needs. */
export const EXAMPLE_UPLOAD_IDS = {
  pending: "0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a",
  completed: "7a6b5c4d-3e2f-4a1b-9c0d-8e7f6a5b4c3d",
  multipart: "4d3c2b1a-0f9e-4d8c-a7b6-5a4f3e2d1c0b",
  unknown: "9e8d7c6b-5a4f-4e3d-b2c1-0a9f8e7d6c5b",
} as const;

export const uploadIdExamples = Object.fromEntries(
  Object.entries(EXAMPLE_UPLOAD_IDS).map(([name, id]) => [name, { summary: `A ${name} upload`, value: id }]),
) as Record<keyof typeof EXAMPLE_UPLOAD_IDS, { summary: string; value: string }>;

const ACCOUNT = "9b2d6f40-3c1e-4a57-8f0e-6d2b1c4a7e93";
const BUCKET = "https://example-account.r2.cloudflarestorage.com/videos";
const SIGNATURE = "&X-Amz-Signature=6f1d0c8e2b7a4f3e9d5c1b0a8e7f6d5c4b3a2918e7d6c5b4a39281f0e1d2c3b4";
const objectUrl = (id: string) => `${BUCKET}/uploads/${ACCOUNT}/${id}/source`;
const signed = (id: string, query: string, expires: number, headers = "host") =>
  `${objectUrl(id)}?${query}X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261120T093000Z&X-Amz-Expires=${expires}&X-Amz-SignedHeaders=${headers}${SIGNATURE}`;
const inputUrl = (id: string) => signed(id, "", 604800);

const MiB = 1024 * 1024;
const SMALL = 50 * MiB;
const LARGE = 300 * MiB + 12_345;
const MULTIPART_ID = "2~bT8mYv1xQ4nR7sK0cZ5hW3jL9pD6fG";

const common = (id: string, filename: string, size: number) => ({
  id,
  filename,
  contentType: "video/mp4",
  size,
  expiresAt: "2026-11-21T09:30:00.000Z",
  deletesAt: "2026-11-27T09:30:00.000Z",
  createdAt: "2026-11-20T09:30:00.000Z",
});

const single = (id: string, size: number) => ({
  ...common(id, "interview.mp4", size),
  status: "pending" as const,
  uploadUrl: signed(id, "", 86400, "content-length%3Bcontent-type%3Bhost"),
  inputUrl: inputUrl(id),
});

const multipart = (id: string) => ({
  ...common(id, "keynote.mov", LARGE),
  status: "pending" as const,
  partSize: partSizeFor(LARGE),
  parts: planParts(LARGE, partSizeFor(LARGE)).map((part) => ({
    ...part,
    url: signed(id, `partNumber=${part.partNumber}&uploadId=${MULTIPART_ID}&`, 86400, "content-length%3Bhost"),
  })),
  inputUrl: inputUrl(id),
});

const completedMultipart = (id: string) => {
  const { parts: _spent, ...rest } = multipart(id);
  return { ...rest, status: "completed" as const };
};

export const createUploadExamples = {
  single: {
    summary: "A 50 MiB file: one PUT",
    value: { filename: "interview.mp4", contentType: "video/mp4", size: SMALL },
  },
  multipart: {
    summary: "A 300 MiB file: multipart",
    value: { filename: "keynote.mov", contentType: "video/mp4", size: LARGE },
  },
  typeFromFilename: {
    summary: "No contentType: the filename's extension names it",
    value: { filename: "interview.mp4", size: SMALL },
  },
  sizeOverPlan: {
    summary: "Over the Starter plan's 1 GiB",
    value: { filename: "interview.mp4", size: MAX_UPLOAD_BYTES.free + 1 },
  },
  badFilename: { summary: "A filename with a path", value: { filename: "../etc/passwd", size: 100 } },
  typeRefused: {
    summary: "A type no job reads",
    value: { filename: "page.html", contentType: "text/html", size: 100 },
  },
};

export const createdUploadExamples = {
  single: { summary: "One presigned PUT", value: single(EXAMPLE_UPLOAD_IDS.pending, SMALL) },
  multipart: { summary: "A presigned URL per part", value: multipart(EXAMPLE_UPLOAD_IDS.multipart) },
  typeFromFilename: { summary: "Stored as video/mp4", value: single(EXAMPLE_UPLOAD_IDS.pending, SMALL) },
};

export const createUploadRefusals = {
  badFilename: {
    summary: "A filename with a path",
    value: ApiError.validation([{ field: "filename", message: "must not contain '/', '\\' or control characters" }])
      .body,
  },
  typeRefused: {
    summary: "A type no job reads",
    value: ApiError.validation([{ field: "contentType", message: `must be ${UPLOAD_TYPES_TEXT}` }]).body,
  },
};

export const sizeOverPlanExample = { summary: "Over the plan's maximum", value: sizeOverPlan("free").body };

const firstExpiry = new Date("2026-11-21T08:05:00.000Z");
export const uploadLimitExamples = {
  pendingCapped: {
    summary: "The Starter plan's pending uploads at their cap",
    value: pendingUploadsCapped("free", {
      open: MAX_PENDING_UPLOADS.free,
      firstExpiry,
      lastExpiry: new Date("2026-11-21T09:29:00.000Z"),
    }).body,
  },
  storageFull: {
    summary: "Over the Starter plan's storage for uploads",
    value: uploadStorageFull("free", SMALL, { bytes: UPLOAD_STORAGE_BYTES.free - SMALL + 1, nextRelease: firstExpiry })
      .body,
  },
};

export const uploadReadExamples = {
  pending: { summary: "Pending: its URL still works", value: single(EXAMPLE_UPLOAD_IDS.pending, SMALL) },
  completed: {
    summary: "Completed: only the link to read it",
    value: {
      ...common(EXAMPLE_UPLOAD_IDS.completed, "interview.mp4", SMALL),
      status: "completed" as const,
      inputUrl: inputUrl(EXAMPLE_UPLOAD_IDS.completed),
    },
  },
  multipart: { summary: "Multipart, pending", value: multipart(EXAMPLE_UPLOAD_IDS.multipart) },
};

export const completedUploadExamples = {
  assembled: { summary: "Assembled from its parts", value: completedMultipart(EXAMPLE_UPLOAD_IDS.multipart) },
};

/** Named as the ids they answer: a single upload, and a multipart upload none of whose parts are in. */
export const completionRefusals = {
  pending: { summary: "A single upload", value: singleUploadCompletes().body },
  multipart: {
    summary: "Parts missing",
    value: partsMissing(planParts(LARGE, partSizeFor(LARGE)).map((p) => p.partNumber)).body,
  },
  expired: { summary: "Past expiresAt", value: uploadExpired().body },
};

export const uploadNotFoundExamples = {
  unknown: { summary: "No such upload for this account", value: uploadNotFound().body },
};
