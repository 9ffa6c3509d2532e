export type SeededKind = 'workflow' | 'version' | 'suite' | 'instance' | 'service';
export function seededUuid(kind: SeededKind, index: number): string;
export const SEEDED_VERSION: string;
export const SEEDED_MAIN_WORKFLOW: { path: string; language: string };
export type Exec = (sql: string, params: unknown[]) => Promise<Record<string, unknown>[]>;
export function seedWorkflows(
  exec: Exec,
  options: {
    ownerId: number;
    from?: number;
    count: number;
    archive: { sha256: string; size: number };
    serviceUrl: string;
    now?: Date;
    isPublic?: boolean;
    /** The registry (a row of `registries`) that sent them. */
    registry?: { id: number; uri: string };
  },
): Promise<void>;
export const SEEDED_MACHINES_OWNER: number;
export function seedMachines(exec: Exec, options: { count: number; now?: Date }): Promise<void>;
export function seedManagedRuns(
  exec: Exec,
  options: { count: number; instances: number; queued: number; now?: Date },
): Promise<void>;
