import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DomainError } from '../common/errors/domain-error.js';
import { loadConfig } from '../config/app-config.js';
import { eventsWithout } from './events.js';
import {
  listOf,
  UNSUBSCRIBE_LINK_DAYS,
  UnsubscribeLinks,
  type UnsubscribeTarget,
} from './unsubscribe-links.js';

const NOW = Date.UTC(2026, 0, 10, 12, 0, 0);
const WORKFLOW = '0b7e0f0e-3f5d-4d7a-9a55-3c9a3f0d2c11';

describe('unsubscribe links', () => {
  let dataDir: string;
  let links: UnsubscribeLinks;
  let other: UnsubscribeLinks;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'unsubscribe-links-'));
    links = new UnsubscribeLinks(loadConfig({ DATA_DIR: dataDir, JWT_SECRET: 'a'.repeat(40) }));
    other = new UnsubscribeLinks(loadConfig({ DATA_DIR: dataDir, JWT_SECRET: 'b'.repeat(40) }));
  });

  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  const tokenOf = (link: string): string => link.slice('https://x.example/unsubscribe/'.length);
  const kindOf = (run: () => unknown): string | undefined => {
    try {
      run();
      return undefined;
    } catch (error) {
      return error instanceof DomainError ? error.kind : 'not a DomainError';
    }
  };

  it('opens to the recipient and the list it was made for, of either kind', () => {
    for (const event of ['BUILD_FAILED', 'TESTS_STOPPED', 'FOLLOW_FAILED'] as const) {
      const target: UnsubscribeTarget = { userId: 7, channelId: 42, list: listOf(event, WORKFLOW) };
      const token = tokenOf(links.linkFor('https://x.example', target, NOW));
      expect(token).toMatch(/^[\w-]+\.[\w-]{43}$/);
      expect(links.open(token, NOW)).toEqual(target);
    }
  });

  it('refuses a token altered anywhere, or signed under another secret, as invalid input', () => {
    const target: UnsubscribeTarget = { userId: 7, channelId: 42, list: listOf('BUILD_FAILED', WORKFLOW) };
    const token = tokenOf(links.linkFor('https://x.example', target, NOW));
    for (let at = 0; at < token.length; at++) {
      if (token[at] === '.') {
        continue;
      }
      const altered = `${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}`;
      expect([at, kindOf(() => links.open(altered, NOW))]).toEqual([at, 'invalid_input']);
    }
    const foreign = tokenOf(other.linkFor('https://x.example', target, NOW));
    expect(kindOf(() => links.open(foreign, NOW))).toBe('invalid_input');
    expect(kindOf(() => links.open('', NOW))).toBe('invalid_input');
    expect(kindOf(() => links.open(`${token}.`, NOW))).toBe('invalid_input');
  });

  it(`works for ${UNSUBSCRIBE_LINK_DAYS} days from the mail, then is refused as forbidden`, () => {
    const target: UnsubscribeTarget = { userId: 7, channelId: 42, list: listOf('BUILD_FAILED', WORKFLOW) };
    const token = tokenOf(links.linkFor('https://x.example', target, NOW));
    const days = (n: number): number => NOW + n * 24 * 3600_000;
    expect(links.open(token, days(UNSUBSCRIBE_LINK_DAYS) - 1000)).toEqual(target);
    expect(kindOf(() => links.open(token, days(UNSUBSCRIBE_LINK_DAYS)))).toBe('forbidden');
    expect(() => links.open(token, days(UNSUBSCRIBE_LINK_DAYS + 1))).toThrow(
      `This unsubscribe link expired on 2026-03-11 12:00 UTC: nothing was changed. A newer mail has a link ` +
        `that works; or POST /workflows/${WORKFLOW}/unsubscribe with your token.`,
    );
  });
});

describe('eventsWithout', () => {
  it('takes one event out, ALL standing for each of the others', () => {
    expect(eventsWithout(['ALL'], 'FOLLOW_FAILED')).toEqual([
      'BUILD_FAILED',
      'BUILD_RECOVERED',
      'TESTS_STOPPED',
      'SCHEDULE_DISABLED',
    ]);
    expect(eventsWithout(['BUILD_FAILED', 'FOLLOW_FAILED'], 'FOLLOW_FAILED')).toEqual(['BUILD_FAILED']);
    expect(eventsWithout(['FOLLOW_FAILED'], 'FOLLOW_FAILED')).toEqual([]);
  });
});
