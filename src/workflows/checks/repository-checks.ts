import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { COLUMN_LENGTHS } from '../columns.js';
import {
  type CheckedCrate,
  isSelected,
  ISSUE_CHECKS,
  ISSUE_SEVERITIES,
  type IssueCheck,
  type IssueChecks,
  type IssueFinding,
  type IssueSelection,
  type IssueSeverity,
  type IssueType,
} from '../../crates/index.js';

/** An issue as a version records and shows it (API.md 12). */
export interface VersionIssue {
  /** Its type's id. */
  id: string;
  name: string;
  /** Where: every finding of the type, in one text. */
  description: string;
  severity: IssueSeverity;
}

/**
 * Runs the registered checks (`ISSUE_CHECKS`) on a registration's crate and merges what they find
 * into the version's issues: one per type, errors first, then in the order the types are listed.
 * Built in `onModuleInit`, once a check registered by any module exists.
 */
@Injectable()
export class RepositoryChecks implements OnModuleInit {
  private readonly logger = new Logger(RepositoryChecks.name);
  private checks: readonly IssueCheck[] = [];
  private allTypes: readonly IssueType[] = [];

  constructor(@Inject(ISSUE_CHECKS) private readonly registered: IssueChecks) {}

  onModuleInit(): void {
    this.checks = this.registered();
    this.allTypes = this.checks.flatMap((check) => check.types);
    const seen = new Set<string>();
    for (const type of this.allTypes) {
      if (seen.has(type.id)) {
        throw new Error(`two repository checks report the issue type '${type.id}'`);
      }
      if (type.id.length > COLUMN_LENGTHS.issueType || type.name.length > COLUMN_LENGTHS.issueName) {
        throw new Error(`the issue type '${type.id}' has an id or name longer than its column`);
      }
      seen.add(type.id);
    }
  }

  /** Every issue type, in the order of the checks' registration (`GET /workflows/issues`). */
  types(): readonly IssueType[] {
    return this.allTypes;
  }

  /**
   * The issues of a crate, without the types `selection` leaves out (their checks do not run).
   * A check that throws is logged and left out: a check never refuses a registration.
   */
  async run(subject: CheckedCrate, selection?: IssueSelection): Promise<VersionIssue[]> {
    const wanted = new Set(
      this.allTypes.filter((type) => isSelected(type, selection)).map((type) => type.id),
    );
    const running = this.checks.filter((check) => check.types.some((type) => wanted.has(type.id)));
    const results = await Promise.allSettled(running.map(async (check) => check.check(subject)));
    const details = new Map<string, string[]>();
    results.forEach((result, index) => {
      const check = running[index];
      if (result.status === 'rejected') {
        this.logger.warn(
          `the check of ${check.types.map((type) => type.id).join(', ')} failed and is left out: ${String(result.reason)}`,
        );
        return;
      }
      for (const finding of result.value) {
        this.collect(check, finding, wanted, details);
      }
    });
    const issues = this.allTypes.flatMap((type) => {
      const found = details.get(type.id);
      return found ? [toIssue(type, found)] : [];
    });
    return ISSUE_SEVERITIES.flatMap((severity) => issues.filter((issue) => issue.severity === severity));
  }

  private collect(
    check: IssueCheck,
    finding: IssueFinding,
    wanted: ReadonlySet<string>,
    details: Map<string, string[]>,
  ): void {
    if (!check.types.includes(finding.type)) {
      this.logger.error(`a check reported the issue type '${finding.type.id}', which it does not declare`);
      return;
    }
    if (wanted.has(finding.type.id)) {
      details.set(finding.type.id, [...(details.get(finding.type.id) ?? []), finding.detail]);
    }
  }
}

function toIssue(type: IssueType, details: readonly string[]): VersionIssue {
  const text = `${[...new Set(details)].join('; ')}.`;
  return {
    id: type.id,
    name: type.name,
    description: shortened(text.charAt(0).toUpperCase() + text.slice(1), COLUMN_LENGTHS.issueDescription),
    severity: type.severity,
  };
}

/** At most `limit` characters, cut between code points. */
function shortened(text: string, limit: number): string {
  const points = Array.from(text);
  return points.length > limit ? `${points.slice(0, limit - 1).join('')}…` : text;
}
