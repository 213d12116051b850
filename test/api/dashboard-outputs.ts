import archiver from "archiver";
import { outputKeyFor } from "../../domain/jobs";
import { internal, objectUrl, s3 } from "./harness";

/** A stored (uncompressed) ZIP of `members`, as the encoder uploads ladders. */
export async function storedZip(members: Record<string, string | Buffer>): Promise<Buffer<ArrayBuffer>> {
  const archive = archiver("zip", { store: true });
  const chunks: Buffer[] = [];
  archive.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    archive.on("end", resolve);
    archive.on("error", reject);
  });
  for (const [name, content] of Object.entries(members)) archive.append(content, { name });
  await archive.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** Plays the encoder for a job: claim, upload `body` under `fileName`, complete. */
export async function completeWith(
  jobId: string,
  accountId: string,
  fileName: string,
  body: Uint8Array<ArrayBuffer>,
  contentType: string,
) {
  const claim = await internal(`/jobs/${jobId}/claim`, { dispatch: 0 });
  if (claim.status !== 200) throw new Error(`claim failed: ${claim.status}`);
  const key = outputKeyFor(accountId, jobId, fileName);
  const put = await s3.fetch(objectUrl(key), { method: "PUT", body, headers: { "Content-Type": contentType } });
  if (!put.ok) throw new Error(`upload failed: ${put.status}`);
  const done = await internal(`/jobs/${jobId}/complete`, { claim: 1, outputKey: key, duration: 12.5 });
  if (done.status !== 200) throw new Error(`complete failed: ${done.status}`);
  return key;
}
