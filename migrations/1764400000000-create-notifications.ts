import { Table, type MigrationInterface, type QueryRunner, type TableForeignKeyOptions } from 'typeorm';

function cascade(name: string, column: string, table: string, onDelete = 'CASCADE'): TableForeignKeyOptions {
  return {
    name,
    columnNames: [column],
    referencedTableName: table,
    referencedColumnNames: ['id'],
    onDelete,
    onUpdate: 'NO ACTION',
  };
}

/**
 * Telling people (API.md 6): subscriptions, the events raised once per (instance, build), the
 * notifications of each subscriber, their channels, and the outbox of deliveries with its log.
 */
export class CreateNotifications1764400000000 implements MigrationInterface {
  name = 'CreateNotifications1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'subscriptions',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'user_id', type: 'integer', isNullable: false },
          { name: 'workflow_id', type: 'integer', isNullable: false },
          { name: 'workflow_uuid', type: 'varchar', length: '36', isNullable: false },
          { name: 'events', type: 'varchar', length: '128', isNullable: false },
          { name: 'created_at', type: 'datetime', isNullable: false },
          { name: 'modified_at', type: 'datetime', isNullable: false },
        ],
        uniques: [{ name: 'UQ_subscriptions_user_workflow', columnNames: ['user_id', 'workflow_id'] }],
        indices: [{ name: 'IDX_subscriptions_workflow', columnNames: ['workflow_id'] }],
        foreignKeys: [
          cascade('FK_subscriptions_user', 'user_id', 'users'),
          cascade('FK_subscriptions_workflow', 'workflow_id', 'workflows'),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'notification_events',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'instance_id', type: 'integer', isNullable: false },
          { name: 'build_id', type: 'varchar', length: '64', isNullable: false },
          { name: 'event', type: 'varchar', length: '32', isNullable: false },
          { name: 'raised_at', type: 'datetime', isNullable: false },
        ],
        uniques: [
          {
            name: 'UQ_notification_events_instance_build_event',
            columnNames: ['instance_id', 'build_id', 'event'],
          },
        ],
        foreignKeys: [cascade('FK_notification_events_instance', 'instance_id', 'test_instances')],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'notifications',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'uuid', type: 'varchar', length: '36', isNullable: false },
          { name: 'user_id', type: 'integer', isNullable: false },
          { name: 'event_id', type: 'integer', isNullable: true },
          { name: 'event', type: 'varchar', length: '32', isNullable: false },
          { name: 'data', type: 'text', isNullable: false },
          { name: 'created_at', type: 'datetime', isNullable: false },
          { name: 'read_at', type: 'datetime', isNullable: true },
          { name: 'emailed_at', type: 'datetime', isNullable: true },
        ],
        uniques: [{ name: 'UQ_notifications_uuid', columnNames: ['uuid'] }],
        indices: [
          { name: 'IDX_notifications_user_created', columnNames: ['user_id', 'created_at'] },
          { name: 'IDX_notifications_event', columnNames: ['event_id'] },
          { name: 'IDX_notifications_created', columnNames: ['created_at'] },
        ],
        foreignKeys: [
          cascade('FK_notifications_user', 'user_id', 'users'),
          cascade('FK_notifications_event', 'event_id', 'notification_events', 'SET NULL'),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'notification_channels',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'user_id', type: 'integer', isNullable: false },
          { name: 'type', type: 'varchar', length: '16', isNullable: false },
          { name: 'target', type: 'varchar', length: '2048', isNullable: false },
          { name: 'events', type: 'varchar', length: '128', isNullable: false },
          { name: 'secret', type: 'varchar', length: '256', isNullable: true },
          { name: 'created_at', type: 'datetime', isNullable: false },
        ],
        indices: [{ name: 'IDX_notification_channels_user', columnNames: ['user_id'] }],
        foreignKeys: [cascade('FK_notification_channels_user', 'user_id', 'users')],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'deliveries',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'uuid', type: 'varchar', length: '36', isNullable: false },
          { name: 'channel_id', type: 'integer', isNullable: false },
          { name: 'notification_id', type: 'integer', isNullable: false },
          { name: 'state', type: 'varchar', length: '16', isNullable: false },
          { name: 'attempts', type: 'integer', isNullable: false, default: 0 },
          { name: 'next_attempt_at', type: 'datetime', isNullable: true },
          { name: 'created_at', type: 'datetime', isNullable: false },
          { name: 'finished_at', type: 'datetime', isNullable: true },
          { name: 'last_error', type: 'varchar', length: '512', isNullable: true },
          { name: 'claim_owner', type: 'varchar', length: '64', isNullable: true },
          { name: 'claim_until', type: 'datetime', isNullable: true },
        ],
        uniques: [{ name: 'UQ_deliveries_uuid', columnNames: ['uuid'] }],
        indices: [
          { name: 'IDX_deliveries_next_attempt', columnNames: ['next_attempt_at'] },
          { name: 'IDX_deliveries_state_created', columnNames: ['state', 'created_at'] },
          { name: 'IDX_deliveries_channel', columnNames: ['channel_id'] },
          { name: 'IDX_deliveries_notification', columnNames: ['notification_id'] },
        ],
        foreignKeys: [
          cascade('FK_deliveries_channel', 'channel_id', 'notification_channels'),
          cascade('FK_deliveries_notification', 'notification_id', 'notifications'),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'delivery_attempts',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'channel_id', type: 'integer', isNullable: false },
          { name: 'delivery_id', type: 'integer', isNullable: false },
          { name: 'attempted_at', type: 'datetime', isNullable: false },
          { name: 'outcome', type: 'varchar', length: '16', isNullable: false },
          { name: 'status_code', type: 'integer', isNullable: true },
          { name: 'error', type: 'varchar', length: '512', isNullable: true },
        ],
        indices: [
          { name: 'IDX_delivery_attempts_channel', columnNames: ['channel_id', 'id'] },
          { name: 'IDX_delivery_attempts_delivery', columnNames: ['delivery_id'] },
        ],
        foreignKeys: [
          cascade('FK_delivery_attempts_channel', 'channel_id', 'notification_channels'),
          cascade('FK_delivery_attempts_delivery', 'delivery_id', 'deliveries'),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [
      'delivery_attempts',
      'deliveries',
      'notification_channels',
      'notifications',
      'notification_events',
      'subscriptions',
    ]) {
      await queryRunner.dropTable(table);
    }
  }
}
