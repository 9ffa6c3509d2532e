export const MAX_LINES: number;
export function importGraph(files: string[]): Map<string, string[]>;
export function circles(graph: Map<string, string[]>): string[][];
export function longFiles(files: string[]): { file: string; lines: number }[];
