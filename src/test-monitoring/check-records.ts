import type { BuildSelection } from './build-selection.js';
import type { Build } from './testing-services/testing-service.js';

/*
 * What one check leases and what it records: the vocabulary the refresh run and the check-state
 * table share, apart from the SQL that stores it.
 */

/** An instance leased to this copy for one check. */
export interface ClaimedInstance {
  id: number;
  resource: string;
  etag: string | null;
  failureCount: number;
  /** The claim's token, held in `lease_owner`; writes are conditional on it. */
  leaseToken: string;
  service: { id: number; type: string; url: string };
  /** The builds of its version (API.md 7.2). */
  selection: BuildSelection;
}

/** What one check of a claimed instance changes; every kind also releases the lease. */
export type CheckRecord =
  /** New or changed builds, a fresh ETag (or none), the next regular check. */
  | {
      kind: 'builds';
      instanceId: number;
      leaseToken: string;
      checkedAt: Date;
      nextCheckAt: Date;
      etag: string | null;
      builds: readonly Build[];
      /**
       * The workflow's state, when the check read it: true when the CI no longer runs it (a GitHub
       * workflow's `disabled_*` state). Absent: the stored state stays.
       */
      workflowDisabled?: boolean;
    }
  /** 304: nothing but the check bookkeeping changes. */
  | {
      kind: 'not_modified';
      instanceId: number;
      leaseToken: string;
      checkedAt: Date;
      nextCheckAt: Date;
      /** As for `builds`: a 304 on the runs may still come with the workflow's state read. */
      workflowDisabled?: boolean;
    }
  /** The check failed: builds and ETag stay, the back-off goes into the next check time. */
  | {
      kind: 'failed';
      instanceId: number;
      leaseToken: string;
      checkedAt: Date;
      failureCount: number;
      nextCheckAt: Date;
      reason: string;
    }
  /** Not checked (its service is paused, or the copy is stopping): still due, free for anyone. */
  | { kind: 'released'; instanceId: number; leaseToken: string };

/** `CASE instance_id WHEN … THEN … ELSE <column> END` expressions with named parameters, for one UPDATE of many rows. */
export class CaseBuilder {
  readonly parameters: Record<string, unknown> = {};
  private next = 0;

  /** The column's new value per record; rows of other records keep theirs. */
  of<R extends CheckRecord>(
    column: string,
    records: readonly R[],
    value: (record: R) => unknown,
  ): () => string {
    if (records.length === 0) {
      return () => column;
    }
    const whens = records.map((record) => {
      const at = this.next++;
      this.parameters[`cid${at}`] = record.instanceId;
      this.parameters[`cval${at}`] = value(record);
      return `WHEN :cid${at} THEN :cval${at}`;
    });
    const sql = `CASE instance_id ${whens.join(' ')} ELSE ${column} END`;
    return () => sql;
  }
}
