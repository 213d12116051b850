export const ROOT: string;
export const CLI_BUILD: string;
export const CLI_INPUTS: string;
export const INSTALLED_PACKAGES: string;

export function listedInputs(esbuildInputs: string[]): string[];
export function isStale(build?: string, inputsFile?: string, root?: string): Promise<boolean>;
