import { findPreset } from "../domain/presets/catalogue";
import { streamRecipe } from "../domain/stream/layout";
import { CliFailure, EXIT } from "./exit-codes";

/**
 * Refuses `--play` for a preset this CLI knows is not a stream, before anything is uploaded or
 * created: only a stream has a playback link (docs/playback.md). A preset it does not know is
 * the API's to judge, and its job's end says whether it had a link.
 */
export function assertStreamingPreset(presetId: string): void {
  if (!findPreset(presetId) || streamRecipe(presetId)) return;
  throw new CliFailure(
    EXIT.usage,
    `--play: preset ${presetId} is not a stream, so it has no playback link; the streaming presets are hls_*, dash_*, cmaf_* and live_*`,
  );
}
