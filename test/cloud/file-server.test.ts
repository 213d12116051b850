import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFileServer } from "../../dev/cloud/file-server";

/** A raw GET, the path sent as given (fetch would normalise it). */
const rawGet = (base: string, path: string) =>
  new Promise<number>((resolve, reject) => {
    const { hostname, port } = new URL(base);
    request({ host: hostname, port, path, method: "GET" }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on("error", reject)
      .end();
  });

describe("the sample file server of npm run dev", () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startFileServer>>;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "file-server-"));
    await writeFile(join(dir, "sample.mp4"), "not really a video");
    server = await startFileServer({ files: [join(dir, "sample.mp4")] });
  });
  afterAll(async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("serves its files, and a path that does not parse as a URL (any job's source could name one) is a 400, not the end of npm run dev", async () => {
    const base = server.url("sample.mp4").replace(/\/sample\.mp4$/, "");
    expect(await rawGet(base, "/sample.mp4")).toBe(200);
    expect(await rawGet(base, "/missing.mp4")).toBe(404);
    expect(await rawGet(base, "//")).toBe(400);
    expect(await rawGet(base, "/sample.mp4")).toBe(200);
  });
});
