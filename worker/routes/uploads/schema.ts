import { z } from "@hono/zod-openapi";
import { PLAN_DISPLAY_NAMES, PLAN_IDS, UPLOAD_RETENTION_SECONDS } from "../../../domain/plans";
import { isUploadType, UPLOAD_STATUSES, UPLOAD_TYPES_TEXT, uploadTypeFor } from "../../../domain/uploads";
import { ApiError, ERROR_KINDS } from "../../errors";
import { storable } from "../../lib/json-body";
import { Timestamp } from "../../openapi/common";
import { uploadIdExamples } from "./examples";

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what a filename must not hold.
const FILENAME_REFUSED = /[/\\\u0000-\u001f\u007f-\u009f]/;

/** `type/subtype` in RFC 6838's restricted-name characters, no parameters. */
const MEDIA_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$/;
const MAX_CONTENT_TYPE = 127;

const RETENTION_TEXT = PLAN_IDS.map(
  (plan) => `${PLAN_DISPLAY_NAMES[plan]} ${UPLOAD_RETENTION_SECONDS[plan] / 86_400} days`,
).join(", ");

const TYPE_REFUSED = `must be ${UPLOAD_TYPES_TEXT}`;
const TYPE_UNKNOWN = `must be given (${UPLOAD_TYPES_TEXT}), or left out with a filename whose extension names one`;

export const createUploadBody = z
  .object({
    filename: storable(
      z
        .string()
        .min(1, "must be 1 to 255 characters")
        .max(255, "must be 1 to 255 characters")
        .refine((name) => !FILENAME_REFUSED.test(name), "must not contain '/', '\\' or control characters"),
    )
      .optional()
      .openapi({
        type: "string",
        minLength: 1,
        maxLength: 255,
        description:
          "The file's name, for you to recognise it: kept and shown, never part of the storage key. No `/`, `\\` or control characters.",
        example: "interview.mp4",
      }),
    contentType: z
      .string()
      .max(MAX_CONTENT_TYPE, `must be at most ${MAX_CONTENT_TYPE} characters`)
      .regex(MEDIA_TYPE, "must be a media type, type/subtype")
      .optional()
      .openapi({
        description: `The file's media type, signed into the upload URL and stored with the object: ${UPLOAD_TYPES_TEXT} (in any case; stored in lower case). Left out, or \`application/octet-stream\`, it is the type the filename's extension names (\`.mp4\` video/mp4, \`.mov\` video/quicktime, \`.png\` image/png, \`.srt\` application/x-subrip, …); a 400 when neither names an accepted type.`,
        example: "video/mp4",
      }),
    size: z
      .int({ error: (issue) => (issue.input === undefined ? "Invalid input" : "must be a whole number of bytes") })
      .min(1, "must be at least 1 byte")
      .openapi({
        description:
          "The file's size in bytes, signed into the upload URLs: storage refuses a body of any other length. Over 100 MiB the upload is multipart. A size over the plan's maximum is a 413.",
        example: 52_428_800,
      }),
  })
  .superRefine(({ contentType, filename }, ctx) => {
    // A malformed field has its own issue already.
    if (contentType !== undefined && (typeof contentType !== "string" || !MEDIA_TYPE.test(contentType))) return;
    const type = uploadTypeFor(contentType, typeof filename === "string" ? filename : undefined);
    if (type === undefined) ctx.addIssue({ code: "custom", path: ["contentType"], message: TYPE_UNKNOWN });
    else if (!isUploadType(type)) ctx.addIssue({ code: "custom", path: ["contentType"], message: TYPE_REFUSED });
  })
  .openapi("CreateUploadRequest", {
    description:
      "`size` is required; `contentType` may be left out for a filename that names it. Unknown fields are ignored.",
  });

/**
 * The type an accepted body's upload is stored as. The schema has refused a body without one,
 * so the refusal here only keeps a caller that skipped the schema from storing an unchecked type.
 */
export function storedTypeOf(body: { contentType?: string; filename?: string }): string {
  const type = uploadTypeFor(body.contentType, body.filename);
  if (type === undefined || !isUploadType(type))
    throw ApiError.validation([{ field: "contentType", message: type === undefined ? TYPE_UNKNOWN : TYPE_REFUSED }]);
  return type;
}

export const uploadIdParam = z.object({
  id: z.string().openapi({
    description: "Upload id (a UUID). Anything else, like another account's upload, is a 404.",
    param: { name: "id", in: "path", examples: uploadIdExamples },
  }),
});

const url = z.url();

export const Upload = z
  .object({
    id: z.uuid(),
    status: z.enum(UPLOAD_STATUSES).openapi("UploadStatus", {
      description:
        "`pending` until the object is complete in storage; `completed` once it is; `expired` when expiresAt passed first; `deleted` once deletesAt has passed and the object is gone.",
    }),
    filename: z.string().nullable(),
    contentType: z.string().nullable(),
    size: z.int().nullable().openapi({ description: "Bytes, as declared." }),
    uploadUrl: url.optional().openapi({
      description:
        "Single upload, while pending: PUT the file's bytes here, with `Content-Type` set to the upload's `contentType` and no Authorization header. Both the length and the type are signed: a body of another length, or another Content-Type, is refused.",
    }),
    partSize: z.int().optional().openapi({
      description: "Multipart upload: every part's size in bytes but the last, which holds the rest.",
    }),
    parts: z
      .array(
        z.object({
          partNumber: z.int().min(1),
          size: z.int().min(1).openapi({ description: "This part's exact length; another length is refused." }),
          url: url.openapi({ description: "PUT this part's bytes here; keep nothing from the answer." }),
        }),
      )
      .optional()
      .openapi({
        description: "Multipart upload, while pending: one presigned URL per part, in order. Then POST …/complete.",
      }),
    inputUrl: url.optional().openapi({
      description:
        "Unless expired or deleted: a signed link to the uploaded object, signed afresh on each read for 7 days or until `deletesAt`, whichever comes first. Give it as a job's `inputUrl` or a timeline clip's source once the upload is completed.",
    }),
    expiresAt: Timestamp.openapi({
      description: "When the upload URLs stop working; an upload not completed by then is abandoned.",
    }),
    deletesAt: Timestamp.openapi({
      description: `When the object is deleted: the plan's retention from creation (${RETENTION_TEXT}). No link outlives it.`,
    }),
    createdAt: Timestamp,
  })
  .openapi("Upload", { description: "A direct upload: where to put the file, and the link a job reads it from." });

export const UploadLimitError = z
  .object({
    error: z.literal(ERROR_KINDS.usageLimitExceeded),
    message: z.string(),
    usage: z.object({
      current: z.int().openapi({ description: "Uploads open now, or bytes the account's uploads hold." }),
      limit: z.int().openapi({ description: "The plan's cap on open uploads, or its storage in bytes." }),
      plan: z.string().openapi({ description: "Plan display name." }),
    }),
  })
  .openapi("UploadLimitError", {
    description:
      "The account's pending uploads are at the plan's cap (the message says how many are open and when they expire), or this upload's size would take the bytes its uploads hold over the plan's storage (the message says when the next stops counting). Not the job quota: it frees up as uploads expire, complete, or are deleted.",
  });
