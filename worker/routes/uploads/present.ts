import { iso } from "../../../domain/time";
import type { UploadView } from "../../lib/uploads";

/** The upload as the API shows it: the URLs the view holds, and nothing spent. */
export function presentUpload({ upload, status, uploadUrl, parts, inputUrl }: UploadView) {
  return {
    id: upload.id,
    status,
    filename: upload.filename,
    contentType: upload.contentType,
    size: upload.size,
    ...(uploadUrl === undefined ? {} : { uploadUrl }),
    ...(upload.partSize === null ? {} : { partSize: upload.partSize }),
    ...(parts === undefined ? {} : { parts }),
    ...(inputUrl === undefined ? {} : { inputUrl }),
    expiresAt: iso(upload.expiresAt),
    deletesAt: iso(upload.deleteAt),
    createdAt: iso(upload.createdAt),
  };
}
