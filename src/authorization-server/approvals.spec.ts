import { byApplication } from './approvals.js';

const at = (minute: number): Date => new Date(Date.UTC(2026, 10, 24, 0, minute));

describe('byApplication', () => {
  it('folds the approvals of one application into one entry: every scope once, the first approval, the latest use', () => {
    expect(
      byApplication([
        { clientId: 'b', clientName: 'B', scopes: 'user.profile', grantedAt: at(5), lastUsedAt: null },
        {
          clientId: 'a',
          clientName: 'A',
          scopes: 'user.profile workflow.read',
          grantedAt: at(2),
          lastUsedAt: at(3),
        },
        { clientId: 'a', clientName: 'A', scopes: 'workflow.read', grantedAt: at(1), lastUsedAt: at(9) },
        { clientId: 'a', clientName: 'A', scopes: 'workflow.write', grantedAt: at(7), lastUsedAt: null },
      ]),
    ).toEqual([
      {
        clientId: 'a',
        clientName: 'A',
        scopes: ['workflow.read', 'workflow.write', 'user.profile'],
        grantedAt: at(1),
        lastUsedAt: at(9),
      },
      { clientId: 'b', clientName: 'B', scopes: ['user.profile'], grantedAt: at(5), lastUsedAt: null },
    ]);
  });

  it('answers no entry for no approval', () => {
    expect(byApplication([])).toEqual([]);
  });
});
