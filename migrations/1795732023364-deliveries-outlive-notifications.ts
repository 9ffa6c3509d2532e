import { TableColumn, TableForeignKey, type MigrationInterface, type QueryRunner } from 'typeorm';
import { withoutForeignKeysOnSqlite } from './1763800000000-monitoring-check-state.js';

const FOREIGN_KEY = 'FK_deliveries_notification';

/**
 * A channel's delivery log outlives the notifications it carried (API.md 6.4 as settled): deleting a
 * notification leaves its deliveries (notification_id NULL) and their attempts. Each delivery keeps
 * what it sends (`payload`, the notification as it was when queued), so that every attempt sends
 * the same bytes and the same signature, and so that one still pending is sent after its
 * notification was deleted.
 */
export class DeliveriesOutliveNotifications1795732023364 implements MigrationInterface {
  name = 'DeliveriesOutliveNotifications1795732023364';

  async up(queryRunner: QueryRunner): Promise<void> {
    // On SQLite each change rebuilds `deliveries`: dropping the old table must not take the
    // attempts along (their foreign key cascades).
    await withoutForeignKeysOnSqlite(
      queryRunner,
      async () => {
        await queryRunner.addColumn(
          'deliveries',
          new TableColumn({ name: 'payload', type: 'text', isNullable: true }),
        );
        await this.notificationKey(queryRunner, true, 'SET NULL');
      },
      this.name,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await withoutForeignKeysOnSqlite(
      queryRunner,
      async () => {
        // A delivery without its notification cannot survive a column that requires one.
        await queryRunner.query(
          'DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE notification_id IS NULL)',
        );
        await queryRunner.query('DELETE FROM deliveries WHERE notification_id IS NULL');
        await this.notificationKey(queryRunner, false, 'CASCADE');
        await queryRunner.dropColumn('deliveries', 'payload');
      },
      this.name,
    );
  }

  private async notificationKey(
    queryRunner: QueryRunner,
    nullable: boolean,
    onDelete: string,
  ): Promise<void> {
    await queryRunner.dropForeignKey('deliveries', FOREIGN_KEY);
    const table = await queryRunner.getTable('deliveries');
    const current = table?.findColumnByName('notification_id');
    if (!current) {
      throw new Error('deliveries.notification_id is missing');
    }
    const changed = current.clone();
    changed.isNullable = nullable;
    await queryRunner.changeColumn('deliveries', current, new TableColumn(changed));
    await queryRunner.createForeignKey(
      'deliveries',
      new TableForeignKey({
        name: FOREIGN_KEY,
        columnNames: ['notification_id'],
        referencedTableName: 'notifications',
        referencedColumnNames: ['id'],
        onDelete,
        onUpdate: 'NO ACTION',
      }),
    );
  }
}
