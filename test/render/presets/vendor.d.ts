// The parsers ship no types; these are the parts the tests read.
declare module "m3u8-parser" {
  export class Parser {
    push(text: string): void;
    end(): void;
    manifest: {
      version?: number;
      independentSegments?: boolean;
      playlists?: {
        uri: string;
        attributes: Record<string, unknown> & {
          BANDWIDTH?: number;
          CODECS?: string;
          RESOLUTION?: { width: number; height: number };
        };
      }[];
      segments: {
        uri: string;
        duration: number;
        map?: { uri: string };
        /** EXT-X-PROGRAM-DATE-TIME, in milliseconds since the epoch. */
        programDateTime?: number;
      }[];
      mediaGroups?: {
        AUDIO?: Record<string, Record<string, { uri: string; default?: boolean; autoselect?: boolean }>>;
      };
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
    segments: {
      uri: string;
      resolvedUri: string;
      duration: number;
      map?: { uri: string; resolvedUri: string };
      number?: number;
      /** Seconds on the period's timeline: (S@t - presentationTimeOffset) / timescale. */
      presentationTime?: number;
    }[];
    endList?: boolean;
  }
  export function parse(
    manifest: string,
    /** NOW: the wall clock a dynamic MPD is read at, in milliseconds. */
    options: { manifestUri: string; NOW?: number },
  ): {
    duration?: number;
    playlists: MpdPlaylist[];
    mediaGroups: { AUDIO: Record<string, Record<string, { playlists: MpdPlaylist[] }>> };
  };
  /** The MPD's UTCTiming, its direct value parsed to milliseconds; null without one. */
  export function parseUTCTiming(
    manifest: string,
  ): { schemeIdUri: string; value: number | string; method: string } | null;
  /** The MPD element, parsed (xmldom). */
  export function stringToMpdXml(manifest: string): Element;
}
