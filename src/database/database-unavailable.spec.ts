import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { DatabaseOutage, DatabaseUnavailableError } from './database-unavailable.js';

describe('DatabaseOutage', () => {
  it('logs the first failure of an outage at error with its cause, counts the rest, and logs the recovery once', () => {
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const outage = new DatabaseOutage();
      outage.answered();
      expect(warn).not.toHaveBeenCalled();

      const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED' });
      for (let i = 0; i < 50; i++) {
        outage.failed(new DatabaseUnavailableError('could not connect to the database', { cause }));
      }
      expect(error).toHaveBeenCalledTimes(1);
      expect(error.mock.calls[0][1]).toBe(
        'the database is unavailable: could not connect to the database: connect ECONNREFUSED 127.0.0.1:3306; ' +
          'requests answer 503 until it answers again',
      );
      outage.answered();
      outage.answered();
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0][0]).toMatch(
        /^the database answers again after \d+\.\d s \(50 failed call\(s\)\)$/,
      );

      // A second outage is a new one.
      outage.failed(new DatabaseUnavailableError('the database did not answer within 1 s'));
      expect(error).toHaveBeenCalledTimes(2);
    } finally {
      error.mockRestore();
      warn.mockRestore();
    }
  });
});
