// The parsers ship no types; these are the parts the render tests read.
declare module "m3u8-parser" {
  export class Parser {
    push(text: string): void;
    end(): void;
    manifest: {
      playlists?: {
        uri: string;
        attributes: Record<string, unknown> & {
          BANDWIDTH?: number;
          CODECS?: string;
          RESOLUTION?: { width: number; height: number };
        };
      }[];
      segments: { uri: string; duration: number; map?: { uri: string } }[];
      mediaGroups?: { AUDIO?: Record<string, Record<string, { uri: string; default?: boolean }>> };
      playlistType?: string;
      endList?: boolean;
      targetDuration?: number;
      mediaSequence?: number;
      start?: { timeOffset: number; precise?: boolean };
    };
  }
}

declare module "mpd-parser" {
  interface MpdPlaylist {
    attributes: { NAME: string; BANDWIDTH: number; CODECS: string; RESOLUTION?: { width: number; height: number } };
    segments: { uri: string; resolvedUri: string; duration: number; map?: { uri: string; resolvedUri: string } }[];
  }
  export function parse(
    manifest: string,
    options: { manifestUri: string },
  ): {
    playlists: MpdPlaylist[];
    mediaGroups: { AUDIO: Record<string, Record<string, { playlists: MpdPlaylist[] }>> };
  };
}
