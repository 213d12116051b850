import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { outputKeyFor, outputKeyParts } from "../../../domain/jobs";
import { PRESET_IDS } from "../../../domain/presets/catalogue";

const account = randomUUID();
const job = randomUUID();

describe("output keys: outputKeyParts reads back what outputKeyFor makes, and nothing else", () => {
  it("every name the encoder gives an output (`<preset>.<ext>`, `output.<ext>`) comes back whole", () => {
    const names = [
      ...PRESET_IDS.flatMap((preset) => ["mp4", "webm", "mp3", "m4a", "zip"].map((ext) => `${preset}.${ext}`)),
    ];
    for (const fileName of [...names, "output.mp4", "output.mov"])
      expect(outputKeyParts(outputKeyFor(account, job, fileName)), fileName).toEqual({
        accountId: account,
        jobId: job,
        fileName,
      });
  });

  it("another root, ids that are not Postgres's, extra or missing segments, and names that could leave the prefix are refused", () => {
    for (const key of [
      `legacy-bucket/${job}.mp4`,
      `outputs/${account}/${job}`,
      `outputs/${account}/${job}/`,
      `outputs/${account}/${job}/a/b.mp4`,
      `outputs/${account}/${job}/../x.mp4`,
      `outputs/${account}/${job}/..`,
      `outputs/${account}/${job}/.`,
      `outputs/${account}/${job}/.hidden`,
      `outputs/${account}/${job}/%2e%2e`,
      `outputs/${account}/${job}/a\\b.mp4`,
      `outputs/${account}/${job}/a b.mp4`,
      `outputs/${account}/${job}/${"a".repeat(129)}`,
      `outputs/${account.toUpperCase()}/${job}/x.mp4`,
      `outputs/not-a-uuid/${job}/x.mp4`,
      `/outputs/${account}/${job}/x.mp4`,
      `outputs/${account}/${job}/x.mp4\n`,
      "",
    ])
      expect(outputKeyParts(key), JSON.stringify(key)).toBeNull();
  });
});
