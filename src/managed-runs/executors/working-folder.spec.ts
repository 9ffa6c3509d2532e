import { claimTag, leftoverFolders, parseWorkingFolderName, workingFolderName } from './working-folder.js';

describe('working folder names and leftovers', () => {
  it('names a folder by its run id and a tag of its claim, and reads them back', () => {
    const name = workingFolderName(12, 'runner-a#3');
    expect(name).toBe(`run-12-${claimTag('runner-a#3')}`);
    expect(parseWorkingFolderName(name)).toEqual({ runId: 12, tag: claimTag('runner-a#3') });
    expect(claimTag('runner-a#3')).not.toBe(claimTag('runner-a#4'));
    for (const other of ['run-12', 'run-x-ab', 'crate', 'run-12-AB', 'run-12-ab/..']) {
      expect(parseWorkingFolderName(other)).toBeUndefined();
    }
  });

  it('finds the folders of ended or handed-back runs and of attempts another claim replaced, never one its claim holds', () => {
    const names = [
      workingFolderName(1, 'a#1'), // held by its claim (this runner's or another's)
      workingFolderName(2, 'a#2'), // the run ended or was handed back: no claim
      workingFolderName(3, 'dead#1'), // its runner died; another claim holds the run now
      workingFolderName(3, 'b#7'), // the attempt that took it over
      'run-4-0123abcd', // an earlier version's name: its run holds no claim of that tag
      'not-a-run',
    ];
    const claims = new Map([
      [1, 'a#1'],
      [3, 'b#7'],
      [4, 'c#1'],
    ]);
    expect(leftoverFolders(names, claims)).toEqual([names[1], names[2], 'run-4-0123abcd']);
  });
});
