import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

/** How many runs one backfill UPDATE marks (a bound on its parameter list). */
const BATCH = 500;

/**
 * API.md 17: at most one queued run per managed instance, kept by the database. A first check and
 * a trigger that race, two copies of the service checking one instance at once, or a double-clicked
 * trigger each queued a run of their own; a read before the insert cannot stop that, a unique key
 * can. `queued_instance_id` is the run's instance while the run waits to start (queued, no cancel
 * asked for) and null otherwise; its unique index lets NULLs repeat on SQLite and MariaDB alike, so
 * it holds one row per instance at most, whatever the number of runs that ran or run.
 *
 * The mark goes when the run's status leaves `queued` (it starts, ends or is cancelled), not when
 * a runner claims it: a claim may run out or be handed back before the run started, and the run is
 * then still the one waiting (the build shows `waiting`) that a trigger stands behind.
 *
 * MariaDB has no partial index (`UNIQUE ... WHERE status = 'queued'`); a plain column, set and
 * cleared in the very statements that change a run's status, works the same on both databases and
 * keeps each of those writes one statement.
 *
 * Rows already queued are marked, the oldest of each instance when a database holds several (the
 * runs queued twice before this): the others still run, only a new run of that instance waits
 * until the marked one started.
 */
export class OneQueuedRunPerInstance1795950000000 implements MigrationInterface {
  name = 'OneQueuedRunPerInstance1795950000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'managed_runs',
      new TableColumn({ name: 'queued_instance_id', type: 'integer', isNullable: true }),
    );
    const oldest = (await queryRunner.query(
      `SELECT MIN(id) AS id FROM managed_runs WHERE status = 'queued' AND cancel_requested = 0
       GROUP BY instance_id`,
    )) as { id: number | string }[];
    const ids = oldest.map((row) => Number(row.id));
    for (let start = 0; start < ids.length; start += BATCH) {
      const batch = ids.slice(start, start + BATCH);
      await queryRunner.query(
        `UPDATE managed_runs SET queued_instance_id = instance_id WHERE id IN (${batch.map(() => '?').join(', ')})`,
        batch,
      );
    }
    await queryRunner.createIndex(
      'managed_runs',
      new TableIndex({
        name: 'IDX_managed_runs_queued',
        columnNames: ['queued_instance_id'],
        isUnique: true,
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await withoutForeignKeysOnSqlite(
      queryRunner,
      async () => {
        await queryRunner.dropIndex('managed_runs', 'IDX_managed_runs_queued');
        await queryRunner.dropColumn('managed_runs', 'queued_instance_id');
      },
      this.name,
    );
  }
}
