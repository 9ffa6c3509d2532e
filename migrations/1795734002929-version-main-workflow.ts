import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

/**
 * A version's main workflow as its crate names it (the `mainEntity` @id) and its language, so
 * that GA4GH TRS (API.md 10.2) lists descriptor types without opening archives. The versions
 * registered before have neither; the registry reads them from their archives at start-up
 * (MainWorkflowBackfill). The indexes serve the TRS filters by name and by language, each in
 * the list's order.
 */
export class VersionMainWorkflow1795734002929 implements MigrationInterface {
  name = 'VersionMainWorkflow1795734002929';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumns('workflow_versions', [
      new TableColumn({ name: 'main_workflow', type: 'varchar', length: '1024', isNullable: true }),
      new TableColumn({ name: 'workflow_language', type: 'varchar', length: '16', isNullable: true }),
    ]);
    await queryRunner.createIndices('workflow_versions', [
      new TableIndex({ name: 'IDX_workflow_versions_name', columnNames: ['name'] }),
      new TableIndex({ name: 'IDX_workflow_versions_language', columnNames: ['workflow_language'] }),
    ]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('workflow_versions', 'IDX_workflow_versions_language');
    await queryRunner.dropIndex('workflow_versions', 'IDX_workflow_versions_name');
    // Dropping a column rebuilds workflow_versions on SQLite: with foreign keys on, its suites and
    // instances would go by cascade.
    await withoutForeignKeysOnSqlite(
      queryRunner,
      async () => {
        await queryRunner.dropColumn('workflow_versions', 'workflow_language');
        await queryRunner.dropColumn('workflow_versions', 'main_workflow');
      },
      this.name,
    );
  }
}
