export const STAMP: string;
export function sourcesDigest(root: string): string;
export function needsBuild(root: string): boolean;
export function buildIfChanged(root: string): number;
