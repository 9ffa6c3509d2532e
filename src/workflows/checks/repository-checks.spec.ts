import { readCrateGraph, parseCrateGraph } from '../../crates/ro-crate-parser.js';
import type { CheckedCrate, IssueCheck, IssueFinding, IssueType } from '../../crates/checks/issue-check.js';
import { RepositoryChecks } from './repository-checks.js';

function type(id: string, severity: IssueType['severity']): IssueType {
  return { id, name: `name of ${id}`, description: `about ${id}`, severity, labels: [] };
}

const WARNING = type('a.Warning', 'warning');
const ERROR = type('b.Error', 'error');
const OTHER = type('c.Other', 'error');

/** A check that reports what it is given for each of its types. */
function reporting(types: IssueType[], findings: IssueFinding[]): IssueCheck {
  return { types, check: () => findings };
}

const SUBJECT: CheckedCrate = (() => {
  const graph = readCrateGraph({
    '@graph': [{ '@id': 'ro-crate-metadata.json', about: { '@id': './' } }, { '@id': './' }],
  });
  return { crate: parseCrateGraph(graph), graph, files: new Set(['ro-crate-metadata.json']) };
})();

/** RepositoryChecks with these checks registered, as the app makes it. */
function checksOf(checks: IssueCheck[]): RepositoryChecks {
  const made = new RepositoryChecks(() => checks);
  made.onModuleInit();
  return made;
}

describe('RepositoryChecks', () => {
  it('lists every type in the order of the checks, and refuses two checks reporting one type', () => {
    const checks = checksOf([reporting([WARNING, ERROR], []), reporting([OTHER], [])]);
    expect(checks.types().map((t) => t.id)).toEqual(['a.Warning', 'b.Error', 'c.Other']);
    expect(() => checksOf([reporting([WARNING], []), reporting([WARNING], [])])).toThrow(
      "two repository checks report the issue type 'a.Warning'",
    );
  });

  it('makes one issue per type, errors first, each with every place found', async () => {
    const checks = checksOf([
      reporting(
        [WARNING, ERROR],
        [
          { type: WARNING, detail: 'the suite #a has none' },
          { type: ERROR, detail: 'something is wrong' },
          { type: WARNING, detail: 'the suite #b has none' },
          { type: WARNING, detail: 'the suite #a has none' },
        ],
      ),
    ]);
    await expect(checks.run(SUBJECT)).resolves.toEqual([
      { id: 'b.Error', name: 'name of b.Error', description: 'Something is wrong.', severity: 'error' },
      {
        id: 'a.Warning',
        name: 'name of a.Warning',
        description: 'The suite #a has none; the suite #b has none.',
        severity: 'warning',
      },
    ]);
  });

  it('runs no check whose every type the selection leaves out, and records none of those types', async () => {
    let ran = 0;
    const counted: IssueCheck = {
      types: [OTHER],
      check: () => {
        ran++;
        return [{ type: OTHER, detail: 'x' }];
      },
    };
    const checks = checksOf([
      reporting(
        [WARNING, ERROR],
        [
          { type: WARNING, detail: 'w' },
          { type: ERROR, detail: 'e' },
        ],
      ),
      counted,
    ]);
    const issues = await checks.run(SUBJECT, { exclude: ['c.Other', 'Warning'] });
    expect(issues.map((issue) => issue.id)).toEqual(['b.Error']);
    expect(ran).toBe(0);
    await expect(checks.run(SUBJECT, { check: false })).resolves.toEqual([]);
  });

  it('leaves out a check that fails, and what a check reports of a type it does not declare', async () => {
    const checks = checksOf([
      { types: [ERROR], check: () => Promise.reject(new Error('GitHub is down')) },
      reporting(
        [WARNING],
        [
          { type: OTHER, detail: 'not mine' },
          { type: WARNING, detail: 'mine' },
        ],
      ),
    ]);
    await expect(checks.run(SUBJECT)).resolves.toEqual([
      expect.objectContaining({ id: 'a.Warning', description: 'Mine.' }),
    ]);
  });

  it('keeps a description within its column, cut between characters', async () => {
    const checks = checksOf([reporting([ERROR], [{ type: ERROR, detail: '🐛'.repeat(3000) }])]);
    const [issue] = await checks.run(SUBJECT);
    expect(Array.from(issue.description)).toHaveLength(2048);
    expect(issue.description.endsWith('🐛…')).toBe(true);
  });
});
