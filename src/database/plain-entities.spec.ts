import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Column, DataSource, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { PlainEntities } from './plain-entities.js';
import { sqliteDriver } from './sqlite-driver.js';

@Entity('plain_things')
class PlainThingEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: 36 })
  uuid!: string;

  @Column({ type: 'varchar', length: 64, nullable: true })
  label!: string | null;

  @Column({ type: 'integer', nullable: true })
  count!: number | null;

  @Column({ name: 'is_public', type: 'boolean', default: 0 })
  public!: boolean;

  @Column({ name: 'created_at', type: 'datetime' })
  createdAt!: Date;

  @Column({
    type: 'varchar',
    length: 64,
    transformer: { to: (value: string) => value, from: (value: string | null) => value?.toUpperCase() },
  })
  shouted!: string;
}

/**
 * PlainEntities copies plain text and integer columns as they come and sends the rest through the
 * driver's conversions: whichever way a column goes, the entity must be the one a find builds.
 */
describe('PlainEntities', () => {
  let dir: string;
  let dataSource: DataSource;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plain-entities-'));
    dataSource = new DataSource({
      type: 'better-sqlite3',
      driver: sqliteDriver(),
      database: join(dir, 'db.sqlite'),
      entities: [PlainThingEntity],
    });
    await dataSource.initialize();
    await dataSource.query(
      `CREATE TABLE plain_things (id INTEGER PRIMARY KEY, uuid varchar(36) NOT NULL, label varchar(64),
         count integer, is_public boolean NOT NULL DEFAULT 0, created_at datetime NOT NULL, shouted varchar(64) NOT NULL)`,
    );
    await dataSource.query(
      `INSERT INTO plain_things (uuid, label, count, is_public, created_at, shouted) VALUES
         ('a0000000-0000-4000-8000-000000000001', 'one', 7, 1, '2026-11-29 08:00:00.000', 'quiet'),
         ('a0000000-0000-4000-8000-000000000002', NULL, NULL, 0, '2026-11-30 09:30:00.123', 'calm')`,
    );
  });

  afterEach(async () => {
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('builds from a row the entities a find builds, conversions and transformers included', async () => {
    const plain = new PlainEntities(dataSource, PlainThingEntity, 't');
    const rows = await dataSource.query<Record<string, unknown>[]>(
      `SELECT ${plain.selectList} FROM plain_things t ORDER BY t.id`,
    );
    const found = await dataSource.getRepository(PlainThingEntity).find({ order: { id: 'ASC' } });
    const built = rows.map((row) => plain.from(row));
    expect(built).toEqual(found);
    expect(built[0]).toBeInstanceOf(PlainThingEntity);
    expect(built[0]).toMatchObject({ public: true, shouted: 'QUIET', count: 7 });
    expect(built[1]?.createdAt).toEqual(new Date('2026-11-30T09:30:00.123Z'));
  });
});
