export const NAPI_OF_BETTER_SQLITE3_13: number;
export const STAND_IN: 'better-sqlite3-node20';
export function needsStandIn(napiVersion: number): boolean;
export type StandInOutcome =
  'not-needed' | 'not-installed' | 'working' | 'built' | 'build-failed' | 'no-node-gyp';
export function buildStandIn(root?: string, napiVersion?: number): StandInOutcome;
