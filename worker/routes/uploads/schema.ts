import { z } from "@hono/zod-openapi";
import { UPLOAD_STATUSES } from "../../../domain/uploads";
import { storable } from "../../lib/json-body";
import { Timestamp } from "../../openapi/common";
import { uploadIdExamples } from "./examples";

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what a filename must not hold.
const FILENAME_REFUSED = /[/\\\u0000-\u001f\u007f-\u009f]/;

/** `type/subtype` in RFC 6838's restricted-name characters, no parameters. */
const MEDIA_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$/;
const MAX_CONTENT_TYPE = 127;

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
      .openapi({ description: "The file's media type, `type/subtype`.", example: "video/mp4" }),
    size: z.int("must be a whole number of bytes").min(1, "must be at least 1 byte").optional().openapi({
      description:
        "The file's size in bytes. Over 100 MiB the upload is multipart; absent, one PUT of any length. A size over the plan's maximum is a 413.",
      example: 52_428_800,
    }),
  })
  .openapi("CreateUploadRequest", { description: "Every field is optional; unknown fields are ignored." });

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
        "`pending` until the object is complete in storage; `completed` once it is; `expired` when expiresAt passed first.",
    }),
    filename: z.string().nullable(),
    contentType: z.string().nullable(),
    size: z.int().nullable().openapi({
      description: "Bytes: as declared, or, for a single upload declared without one, as stored once completed.",
    }),
    uploadUrl: url.optional().openapi({
      description:
        "Single upload, while pending: PUT the file's bytes here (no Authorization header). With `size`, the length is signed: a body of another length is refused.",
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
        "Unless expired: a signed link to the uploaded object (7 days, signed afresh on each read). Give it as a job's `inputUrl` or a timeline clip's source once the upload is completed.",
    }),
    expiresAt: Timestamp.openapi({
      description: "When the upload URLs stop working; an upload not completed by then is abandoned.",
    }),
    createdAt: Timestamp,
  })
  .openapi("Upload", { description: "A direct upload: where to put the file, and the link a job reads it from." });
