import { jest } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { openMemoryDatabase } from '../../test/support/memory-database.js';
import { WorkflowEntity } from '../workflows/entities/registry.entities.js';

describe('numbers bound as parameters on SQLite (openDataSource)', () => {
  let dataSource: DataSource;

  beforeEach(async () => {
    dataSource = await openMemoryDatabase();
    await dataSource.query(
      'CREATE TABLE notes (id INTEGER PRIMARY KEY, size REAL, flag INTEGER, at TEXT, text TEXT)',
    );
    for (let id = 1; id <= 300; id++) {
      await dataSource.query('INSERT INTO notes (id, size, flag, at, text) VALUES (?, ?, ?, ?, ?)', [
        id,
        id + 0.5,
        id % 2,
        `2026-11-${String((id % 28) + 1).padStart(2, '0')} 00:00:00.000`,
        `note ${id}`,
      ]);
    }
  });

  afterEach(() => dataSource.destroy());

  const byId = (id: number) =>
    dataSource.createQueryBuilder().select('n.text', 'text').from('notes', 'n').where('n.id = :id', { id });

  it('gives one SQL text for every id, with the id bound', () => {
    expect(byId(7).getQueryAndParameters()).toEqual([expect.stringMatching(/WHERE n\.id = \?$/), [7]]);
    expect(byId(8).getQuery()).toBe(byId(7).getQuery());
  });

  it("prepares a repository's find once for 300 different ids, and each read finds its own row", async () => {
    const connection = (
      dataSource.driver as unknown as { databaseConnection: { prepare(sql: string): unknown } }
    ).databaseConnection;
    const prepare = jest.spyOn(connection, 'prepare');
    const workflows = dataSource.getRepository(WorkflowEntity);
    for (let id = 1; id <= 300; id++) {
      await expect(workflows.findOneBy({ id })).resolves.toBeNull();
      await expect(byId(id).getRawOne()).resolves.toEqual({ text: `note ${id}` });
    }
    expect(prepare).toHaveBeenCalledTimes(2);
  });

  it('binds fractions, booleans, dates and lists in the order of their places', async () => {
    const rows = await dataSource
      .createQueryBuilder()
      .select('n.id', 'id')
      .from('notes', 'n')
      .where('n.size > :size AND n.id > :floor AND n.flag = :flag AND n.id IN (:...ids) AND n.at >= :since', {
        size: 10.25,
        floor: 11,
        flag: true,
        ids: [3, 11, 12, 13, 29, 41],
        since: new Date('2026-11-05T00:00:00Z'),
      })
      .orderBy('n.id')
      .getRawMany<{ id: number }>();
    // Each condition drops one: 3 by size, 11 by floor, 12 by flag, 29 by date (the 2nd).
    expect(rows.map((row) => row.id)).toEqual([13, 41]);
  });

  it("leaves the caller's parameters as they were", () => {
    const parameters = { id: 5, text: 'note 5' };
    dataSource.driver.escapeQueryWithParameters('SELECT :id, :text', parameters);
    expect(parameters).toEqual({ id: 5, text: 'note 5' });
  });
});
