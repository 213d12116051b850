export const MAX_SUBJECT: number;

export function cleaned(message: string): string[];
export function messageProblems(message: string): string[];
