/**
 * The ready-to-paste shell sequence `npm run dev` prints: encode the sample clip with a preset,
 * wait for it, download it; validate and render the sample timeline, wait, download; then the same
 * first step with the `vep` CLI, and a stream whose playback link it prints while it encodes. Plain curl, grep and cut (no jq), each line whole in itself; the
 * CLI by its path, so the lines work from any directory.
 */
export function trySequence(o: {
  apiUrl: string;
  apiKey: string;
  sampleUrl: string;
  timelineFile: string;
  timelineSays: string;
  cli: string;
}): string[] {
  const jobBody = JSON.stringify({ inputUrl: o.sampleUrl, preset: "mp4_264_720p" });
  const timeline = `-d "@${o.timelineFile}"`;
  return [
    `API=${o.apiUrl}/api/v1 AUTH='Authorization: Bearer ${o.apiKey}' JSON='Content-Type: application/json'`,
    "# 1. Encode the sample clip (10 s, 720p, with a tone) with a preset, wait for it, download the result",
    `JOB=$(curl -s $API/jobs -H "$AUTH" -H "$JSON" -d '${jobBody}' ${KEEP_ID}); echo`,
    ...waitAndDownload("sample-720p.mp4"),
    `# 2. A timeline (${o.timelineSays}): validate it, render it, wait, download`,
    `curl -s -X PUT $API/edl -H "$AUTH" -H "$JSON" ${timeline}; echo`,
    `JOB=$(curl -s $API/edl -H "$AUTH" -H "$JSON" ${timeline} ${KEEP_ID}); echo`,
    ...waitAndDownload("timeline.mp4"),
    "# 3. The vep CLI (--help for all of it): encode, wait with a progress bar, save",
    `VEP_API_URL=${o.apiUrl} VEP_API_KEY=${o.apiKey} "${o.cli}" encode ${o.sampleUrl} --preset mp4_264_480p --interval 2 --out sample-480p.mp4`,
    "# 4. A stream: its playback link prints while it encodes (open it in any HLS player), then its ZIP",
    `VEP_API_URL=${o.apiUrl} VEP_API_KEY=${o.apiKey} "${o.cli}" encode ${o.sampleUrl} --preset hls_abr_264_basic --play --interval 1 --out sample-hls.zip`,
  ];
}

/** Shows the creation response and keeps its id (the first "id" of the body). */
const KEEP_ID = `| tee /dev/stderr | grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4`;

function waitAndDownload(file: string): string[] {
  return [
    `until curl -s $API/jobs/\${JOB:?no job was created} -H "$AUTH" | grep -E '"status":"(completed|failed|cancelled)"'; do sleep 2; done`,
    `curl -s -o ${file} "$(curl -s $API/jobs/$JOB/download-url -H "$AUTH" | grep -o '"downloadUrl":"[^"]*"' | cut -d'"' -f4)" && ls -l ${file}`,
  ];
}
