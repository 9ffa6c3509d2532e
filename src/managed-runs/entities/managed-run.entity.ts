import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';

/** A managed run's status (API.md 17): `queued` → `running` → `passed` | `failed` | `error`. */
export const RUN_STATUSES = ['queued', 'running', 'passed', 'failed', 'error'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** The build id of a run (API.md 17): `m-<id>`. */
export function buildIdOf(runId: number): string {
  return `m-${runId}`;
}

/** The run id of a build id of a managed run, or undefined when it is not one. */
export function runIdOf(buildId: string): number | undefined {
  const match = /^m-([1-9]\d{0,15})$/.exec(buildId);
  return match ? Number(match[1]) : undefined;
}

/**
 * The columns of one run of a managed test instance (migration 1795820000000 says why each is
 * there), mapped twice below: the API's copies with the foreign key to the instance, runner
 * processes without it.
 */
export abstract class ManagedRunColumns {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'instance_id', type: 'integer' })
  instanceId!: number;

  @Column({ type: 'varchar', length: 64 })
  executor!: string;

  @Column({ type: 'varchar', length: 64, nullable: true })
  engine!: string | null;

  @Column({ name: 'archive_sha256', type: 'varchar', length: 64 })
  archiveSha256!: string;

  @Column({ name: 'definition_path', type: 'varchar', length: 1024, nullable: true })
  definitionPath!: string | null;

  @Column({ name: 'workflow_url', type: 'varchar', length: 2048, nullable: true })
  workflowUrl!: string | null;

  @Column({ type: 'varchar', length: 16 })
  status!: RunStatus;

  @Column({ type: 'varchar', length: 512, nullable: true })
  reason!: string | null;

  @Column({ name: 'exit_code', type: 'integer', nullable: true })
  exitCode!: number | null;

  @Column({ name: 'queued_at', type: 'datetime' })
  queuedAt!: Date;

  @Column({ name: 'started_at', type: 'datetime', nullable: true })
  startedAt!: Date | null;

  @Column({ name: 'finished_at', type: 'datetime', nullable: true })
  finishedAt!: Date | null;

  @Column({ name: 'changed_at', type: 'datetime' })
  changedAt!: Date;

  @Column({ name: 'due_at', type: 'datetime', nullable: true })
  dueAt!: Date | null;

  @Column({ name: 'claim_owner', type: 'varchar', length: 64, nullable: true })
  claimOwner!: string | null;

  @Column({ name: 'claim_until', type: 'datetime', nullable: true })
  claimUntil!: Date | null;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  @Column({ type: 'varchar', length: 255, nullable: true })
  handle!: string | null;

  @Column({ name: 'cancel_requested', type: 'boolean', default: 0 })
  cancelRequested!: boolean;

  /** The instance while the run waits to start, else null: unique, one waiting run per instance. */
  @Column({ name: 'queued_instance_id', type: 'integer', nullable: true })
  queuedInstanceId!: number | null;
}

/**
 * managed_runs as the API's copies map it, with its foreign key to the instance. The instance is
 * named by its entity name, so that this feature needs no import of the registry's internals.
 */
@Entity('managed_runs')
@Index('IDX_managed_runs_instance', ['instanceId', 'id'])
@Index('IDX_managed_runs_due', ['dueAt'])
@Index('IDX_managed_runs_changed', ['changedAt'])
@Index('IDX_managed_runs_queued', ['queuedInstanceId'], { unique: true })
export class ManagedRunEntity extends ManagedRunColumns {
  @ManyToOne('TestInstanceEntity', { onDelete: 'CASCADE', onUpdate: 'NO ACTION' })
  @JoinColumn({ name: 'instance_id', foreignKeyConstraintName: 'FK_managed_runs_instance' })
  instance?: object;
}

/**
 * managed_runs as a runner process maps it: the same columns without the relation, whose target
 * (the registry's instances, and theirs in turn) a runner does not load: it needs the runs, the
 * database and the crate store only. The schema is the migration's; the API's mapping is the one
 * checked against it.
 */
@Entity('managed_runs')
@Index('IDX_managed_runs_instance', ['instanceId', 'id'])
@Index('IDX_managed_runs_due', ['dueAt'])
@Index('IDX_managed_runs_changed', ['changedAt'])
@Index('IDX_managed_runs_queued', ['queuedInstanceId'], { unique: true })
export class RunnerRunEntity extends ManagedRunColumns {}
