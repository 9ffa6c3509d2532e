import { readFileSync } from 'node:fs';
import { DomainError } from '../../common/errors/domain-error.js';
import {
  followOf,
  LIFEMONITOR_CONFIG_SCHEMA,
  parseConfigText,
  validateConfig,
} from './lifemonitor-config.js';

const FIXTURES = 'test/fixtures/lifemonitor';

function validate(text: string) {
  return validateConfig(parseConfigText(text));
}

describe('.lifemonitor.yaml (API.md 12)', () => {
  it("is checked against LifeMonitor's own schema, unchanged", () => {
    const theirs: unknown = JSON.parse(readFileSync(`${FIXTURES}/lifemonitor.schema.json`, 'utf8'));
    expect(LIFEMONITOR_CONFIG_SCHEMA).toEqual(theirs);
  });

  it("accepts LifeMonitor's test repository's file and fills in the defaults as LifeMonitor does", () => {
    const result = validate(readFileSync(`${FIXTURES}/test-galaxy-wf-repo.lifemonitor.yaml`, 'utf8'));
    expect(result).toEqual({
      valid: true,
      data: {
        name: 'dummy',
        public: false,
        issues: { check: true, include: [], exclude: [] },
        push: {
          branches: [{ name: 'main', update_registries: [], enable_notifications: true }],
          tags: [
            { name: 'v*.*.*', update_registries: ['wfhub'], enable_notifications: true },
            { name: '*.*.*', update_registries: ['seek'], enable_notifications: true },
          ],
        },
      },
    });
    expect(result.valid && followOf(result.data)).toEqual({ tags: ['v*.*.*', '*.*.*'], branches: ['main'] });
  });

  it('gives every absent section its defaults, and keeps the values given', () => {
    expect(validate('push:\n  tags:\n    - name: "v*"\n      enable_notifications: false\n')).toEqual({
      valid: true,
      data: {
        public: false,
        issues: { include: [], exclude: [] },
        push: {
          branches: [],
          tags: [{ name: 'v*', update_registries: [], enable_notifications: false }],
        },
      },
    });
    expect(validate('{"public": true}')).toMatchObject({ valid: true, data: { public: true } });
  });

  it('says where a file breaks the schema, and how', () => {
    expect(validate('public: "yes"')).toEqual({
      valid: false,
      message: "'public' must be boolean",
      error: expect.stringContaining(
        `Failed validating 'type' in schema #/properties/public/type; on instance /public: "yes"`,
      ),
    });
    expect(validate('push:\n  tags:\n    - update_registries: []\n')).toMatchObject({
      valid: false,
      message: "'push.tags.0' must have required property 'name'",
    });
    expect(validate('pushes: {}')).toMatchObject({
      valid: false,
      message: "the file must NOT have additional properties ('pushes')",
    });
    expect(validate('just text')).toMatchObject({ valid: false, message: 'the file must be object' });
  });

  it('refuses text that is no YAML, or nothing, as a bad request', () => {
    for (const text of ['', '   \n', '# only a comment\n', '{}', 'a: [1, 2', 'a: 1\n---\nb: 2\n']) {
      expect(() => parseConfigText(text)).toThrow(DomainError);
    }
  });

  it('stops a file of nested aliases from growing without bound', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
      ...Array.from({ length: 8 }, (_, i) => {
        const name = String.fromCharCode(98 + i);
        const previous = String.fromCharCode(97 + i);
        return `${name}: &${name} [${Array(10).fill(`*${previous}`).join(',')}]`;
      }),
    ].join('\n');
    expect(() => parseConfigText(bomb)).toThrow(DomainError);
  });
});
