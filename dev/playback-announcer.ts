import { playableJobOf } from "../encoder/jobs/stage-log";

/**
 * Prints a streaming job's playback link the moment its encoder logs that it plays: read through
 * the API with this run's key, as the job's owner is given it (docs/playback.md). A job of
 * another account is named without its link: that account's key reads it.
 */
export function playbackAnnouncer(say: (line: string) => void) {
  let api: { url: string; key: string } | undefined;
  const announced = new Set<string>();

  async function announce(jobId: string, { url, key }: { url: string; key: string }) {
    const response = await fetch(`${url}/api/v1/jobs/${jobId}`, { headers: { authorization: `Bearer ${key}` } });
    if (response.status === 404) {
      say(`[dev] job ${jobId} plays while it encodes; its account's key reads its playbackUrl`);
      return;
    }
    if (!response.ok) throw new Error(`GET /api/v1/jobs/${jobId} answered ${response.status}`);
    const job = (await response.json()) as { playbackUrl?: string | null };
    if (job.playbackUrl) say(`[dev] job ${jobId} plays while it encodes: ${job.playbackUrl}`);
  }

  return {
    /** From now on links are read with this key; lines seen before are not announced. */
    ready(apiUrl: string, apiKey: string) {
      api = { url: apiUrl, key: apiKey };
    },
    /** A line of the stack's log: announces the job if it is a first `playable` line. */
    seen(line: string) {
      const jobId = playableJobOf(line);
      if (!jobId || !api || announced.has(jobId)) return;
      announced.add(jobId);
      announce(jobId, api).catch((err) =>
        say(`[dev] job ${jobId}'s playback link could not be read: ${err instanceof Error ? err.message : err}`),
      );
    },
  };
}
