export function watchTrees(opts: {
  trees: string[];
  root?: string;
  rootFiles?: string[];
  onChange: () => void;
  settleMs?: number;
}): () => void;

export function oneAtATime(run: () => Promise<void>): (() => Promise<void>) & { running(): boolean };
