import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Failing build states, as they were when this ran. */
const FAILING = ['failed', 'error', 'aborted'];

/**
 * API.md 16: a failing build carries its failure (class, reason, evidence), decided once by the
 * check that first saw it failing. Builds that failed before are `unknown`: their logs were never
 * read, and reading them now would cost a request per old build.
 */
export class BuildFailureClasses1795781234567 implements MigrationInterface {
  name = 'BuildFailureClasses1795781234567';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumns('builds', [
      new TableColumn({ name: 'failure_class', type: 'varchar', length: '16', isNullable: true }),
      new TableColumn({ name: 'failure_reason', type: 'varchar', length: '255', isNullable: true }),
      new TableColumn({ name: 'failure_evidence', type: 'text', isNullable: true }),
    ]);
    await queryRunner.query(
      `UPDATE builds SET failure_class = 'unknown', failure_reason = ?, failure_evidence = '[]'
       WHERE status IN (${FAILING.map(() => '?').join(', ')})`,
      ['recorded before failures were classified', ...FAILING],
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumns('builds', ['failure_evidence', 'failure_reason', 'failure_class']);
  }
}
