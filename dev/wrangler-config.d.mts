export interface WranglerConfig {
  compatibility_date: string;
  compatibility_flags?: string[];
  vars?: Record<string, string>;
  rules?: { type: string; globs: string[] }[];
}

export function readWranglerConfig(root: string): Promise<WranglerConfig>;

export function runtimeOptions(config: WranglerConfig): { compatibilityDate: string; compatibilityFlags: string[] };
