import { APPLICATION_SCOPES } from '../auth/scopes.js';
import type { Approval } from './grants.repository.js';

/** What a person allowed one application, over all the approvals they gave it. */
export interface ApplicationAccess {
  clientId: string;
  clientName: string;
  /** The scopes of every approval in force, in the order of APPLICATION_SCOPES. */
  scopes: string[];
  /** The earliest approval in force. */
  grantedAt: Date;
  /** When tokens were last issued for it (a code exchanged, a refresh); null when never yet. */
  lastUsedAt: Date | null;
}

/**
 * Folds approvals (one per consent: a person who approved an application twice has two grants)
 * into one entry per application, in the order each was first approved.
 */
export function byApplication(approvals: Approval[]): ApplicationAccess[] {
  const entries = new Map<string, ApplicationAccess & { scopeSet: Set<string> }>();
  for (const approval of approvals) {
    const entry = entries.get(approval.clientId) ?? {
      clientId: approval.clientId,
      clientName: approval.clientName,
      scopes: [],
      scopeSet: new Set<string>(),
      grantedAt: approval.grantedAt,
      lastUsedAt: null,
    };
    for (const scope of approval.scopes.split(' ')) {
      entry.scopeSet.add(scope);
    }
    if (approval.grantedAt < entry.grantedAt) {
      entry.grantedAt = approval.grantedAt;
    }
    if (approval.lastUsedAt && (!entry.lastUsedAt || approval.lastUsedAt > entry.lastUsedAt)) {
      entry.lastUsedAt = approval.lastUsedAt;
    }
    entries.set(approval.clientId, entry);
  }
  return [...entries.values()]
    .sort((a, b) => a.grantedAt.getTime() - b.grantedAt.getTime())
    .map(({ scopeSet, ...entry }) => ({
      ...entry,
      scopes: [
        ...APPLICATION_SCOPES.filter((scope) => scopeSet.has(scope)),
        ...[...scopeSet].filter((scope) => !(APPLICATION_SCOPES as readonly string[]).includes(scope)),
      ],
    }));
}
