import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { RegisterWorkflowDto } from './register-workflow.dto.js';
import { versionProblem } from '../../common/version-label.js';

describe('versionProblem', () => {
  it.each(['1.0', 'v2', '1.0-rc.1', 'release 2024-05', 'ü', 'x'.repeat(64), '...', '.hidden'])(
    'accepts %j',
    (version) => {
      expect(versionProblem(version)).toBeNull();
    },
  );

  it.each<[unknown, string]>([
    [undefined, 'version is required'],
    [null, 'version is required'],
    [1.0, 'version must be a JSON string (send "1.0", not 1.0)'],
    [['1.0'], 'version must be a JSON string (send "1.0", not 1.0)'],
    ['', 'version must not be empty'],
    ['x'.repeat(65), 'version must be at most 64 characters long'],
    ['1/2', "version must not contain '/' or control characters"],
    ['1\n', "version must not contain '/' or control characters"],
    ['1\u0000', "version must not contain '/' or control characters"],
    ['1\u0085', "version must not contain '/' or control characters"],
    ['.', "version must not be '.' or '..'"],
    ['..', "version must not be '.' or '..'"],
  ])('refuses %j with one reason', (version, reason) => {
    expect(versionProblem(version)).toBe(reason);
  });
});

describe('RegisterWorkflowDto', () => {
  const errorsOf = async (body: Record<string, unknown>) =>
    (await validate(plainToInstance(RegisterWorkflowDto, body))).map((error) => ({
      property: error.property,
      messages: Object.values(error.constraints ?? {}),
    }));

  it('accepts a link and a version, with the optional members', async () => {
    await expect(
      errorsOf({
        roc_link: 'http://localhost:8080/crate.zip',
        version: '1.0',
        authorization: 'Bearer x',
        uuid: '1d8a9c84-8b1c-4bfa-a9c5-52b6b1b9cd67',
        name: 'a name',
      }),
    ).resolves.toEqual([]);
  });

  it('gives one message for a bad version, whatever is wrong with it', async () => {
    await expect(errorsOf({ roc_link: 'https://example.org/c.zip', version: 2 })).resolves.toEqual([
      { property: 'version', messages: ['version must be a JSON string (send "1.0", not 1.0)'] },
    ]);
  });

  it.each([
    '86da0a30-d2cd-013a-a07d-000c29a94011',
    '1D8A9C84-8B1C-4BFA-A9C5-52B6B1B9CD67',
    'ffffffff-ffff-0fff-0fff-ffffffffffff',
  ])('takes %s as a uuid: any 8-4-4-4-12 hexadecimal string', async (uuid) => {
    await expect(errorsOf({ roc_link: 'https://example.org/c.zip', version: '1', uuid })).resolves.toEqual(
      [],
    );
  });

  it.each([
    '86da0a30d2cd013aa07d000c29a94011',
    '86da0a30-d2cd-013a-a07d-000c29a9401g',
    '{86da0a30-d2cd-013a-a07d-000c29a94011}',
  ])('refuses %s as a uuid', async (uuid) => {
    await expect(errorsOf({ roc_link: 'https://example.org/c.zip', version: '1', uuid })).resolves.toEqual([
      { property: 'uuid', messages: ['uuid must be a UUID'] },
    ]);
  });
});
