import { DomainError } from './domain-error.js';
import { atPath, infrastructureError, pathOf, STORAGE_FULL } from './infrastructure.js';

describe('infrastructureError', () => {
  it('answers a full disk, of the file system or of SQLite, also when wrapped by TypeORM', () => {
    const full = new DomainError('insufficient_storage', STORAGE_FULL);
    expect(infrastructureError(Object.assign(new Error('no space'), { code: 'ENOSPC' }))).toEqual(full);
    expect(infrastructureError({ message: 'x', driverError: { code: 'SQLITE_FULL' } })).toEqual(full);
    expect(infrastructureError(new Error('wrapped', { cause: { code: 'EDQUOT' } }))).toEqual(full);
    expect(infrastructureError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBeUndefined();
    expect(infrastructureError('a string')).toBeUndefined();
  });

  it('answers a database that is away or too slow with 503 and Retry-After, whatever the driver', () => {
    for (const code of ['DATABASE_UNAVAILABLE', 'SQLITE_BUSY', 'SQLITE_IOERR_READ', 'ER_LOCK_WAIT_TIMEOUT']) {
      const error = infrastructureError({ message: 'x', driverError: { code } });
      expect({ code, kind: error?.kind, retry: error?.retryAfterSeconds }).toEqual({
        code,
        kind: 'database_unavailable',
        retry: 5,
      });
    }
    expect(infrastructureError({ message: 'x', driverError: { code: 'ER_DUP_ENTRY' } })).toBeUndefined();
  });

  it('puts the path on a storage-full error that lacks one, and leaves every other error alone', () => {
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    expect(pathOf(atPath(enospc, '/data/tmp/x.part'))).toBe('/data/tmp/x.part');
    const reset = Object.assign(new Error('reset'), { code: 'ECONNRESET' });
    expect(atPath(reset, '/data/tmp/x.part')).toBe(reset);
    const located = Object.assign(new Error('ENOSPC'), { code: 'ENOSPC', path: '/elsewhere' });
    expect(atPath(located, '/data/tmp/x.part')).toBe(located);
  });
});
