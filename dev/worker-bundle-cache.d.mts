export function bundleOf(
  root: string,
  newTemporaryDir: () => Promise<string>,
  build: (dir: string) => Promise<void>,
): Promise<{ dir: string; temporary: boolean }>;

export function bundleSources(dir: string): Promise<string[]>;
