import type { IssueType } from './issue-check.js';
import { isSelected } from './issue-selection.js';

const TYPE: IssueType = {
  id: 'repo_layout.MissingROCrateWorkflowFile',
  name: 'Missing RO-Crate workflow file',
  description: '',
  severity: 'error',
  labels: [],
};

describe('isSelected (a .lifemonitor.yaml issues section)', () => {
  it('records everything without a selection', () => {
    expect(isSelected(TYPE)).toBe(true);
    expect(isSelected(TYPE, {})).toBe(true);
  });

  it('records nothing when checks are off, whatever include says', () => {
    expect(isSelected(TYPE, { check: false, include: [TYPE.id] })).toBe(false);
    expect(isSelected(TYPE, { check: true })).toBe(true);
  });

  it.each([
    'repo_layout.MissingROCrateWorkflowFile',
    'MissingROCrateWorkflowFile',
    'missing_ro_crate_workflow_file',
    ' REPO_LAYOUT.missingrocrateworkflowfile ',
  ])('leaves out a type that exclude names as %s', (name) => {
    expect(isSelected(TYPE, { exclude: [name] })).toBe(false);
  });

  it('keeps a type exclude does not name, and one include names again (include wins, as in LifeMonitor)', () => {
    expect(isSelected(TYPE, { exclude: ['best_practices.MissingLicense', 'MissingWorkflowFile'] })).toBe(
      true,
    );
    expect(isSelected(TYPE, { exclude: [TYPE.id], include: ['MissingROCrateWorkflowFile'] })).toBe(true);
    expect(isSelected(TYPE, { include: ['best_practices.MissingLicense'] })).toBe(true);
  });

  it('does not take another group for this one', () => {
    expect(isSelected(TYPE, { exclude: ['other.MissingROCrateWorkflowFile'] })).toBe(true);
  });
});
