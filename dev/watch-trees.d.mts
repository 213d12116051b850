export function watchTrees(opts: {
  trees: string[];
  root?: string;
  rootFiles?: string[];
  onChange: () => void;
  settleMs?: number;
}): () => void;
