import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Dummy nodes can be powered off and on (API.md 8): each keeps its state, running (0) by default. */
export class DummyNodeState1763900000000 implements MigrationInterface {
  name = 'DummyNodeState1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'dummy_nodes',
      new TableColumn({ name: 'state', type: 'integer', isNullable: false, default: 0 }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('dummy_nodes', 'state');
  }
}
