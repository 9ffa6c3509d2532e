import type { Provider } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { registrationsProvider } from '../../common/discovered.js';
import type { ParsedCrate } from '../ro-crate-parser.js';
import type { CrateGraph } from '../crate-graph.js';

export const ISSUE_SEVERITIES = ['error', 'warning'] as const;
export type IssueSeverity = (typeof ISSUE_SEVERITIES)[number];

/** A kind of problem the repository checks find (API.md 12), as `GET /workflows/issues` lists it. */
export interface IssueType {
  /**
   * `<group>.<Name>`, in LifeMonitor's spelling where LifeMonitor has the check
   * (`repo_layout.MissingROCrateWorkflowFile`): the issue's `id` in replies, and what a
   * `.lifemonitor.yaml`'s `issues.exclude` names.
   */
  readonly id: string;
  readonly name: string;
  /** What the problem is and how to fix it, in general; each issue says where. */
  readonly description: string;
  readonly severity: IssueSeverity;
  /** LifeMonitor's labels (`metadata`, `best-practices`, …). */
  readonly labels: readonly string[];
  /** Ids of the types this one is checked after (LifeMonitor's `depends_on`); informative. */
  readonly dependsOn?: readonly string[];
}

/**
 * The repository a crate was registered from (API.md 7.1): which, and the ref and commit
 * registered. Checks of the repository itself live in repositories/, which fills this in.
 */
export interface CheckedRepository {
  /** Where its host's pages are (`https://github.com`). */
  site: string;
  owner: string;
  repo: string;
  ref: string;
  commit: string;
}

/** What the checks look at: one registration's crate and, for a repository link, its repository. */
export interface CheckedCrate {
  /** The crate as the registry reads it. */
  readonly crate: ParsedCrate;
  /** Its metadata's JSON-LD graph, for rules about more than the registry stores. */
  readonly graph: CrateGraph;
  /**
   * Every file of the archive, by its path from the crate's root (the folder of
   * `ro-crate-metadata.json`): `README.md`, `test/planemo.yml`. A detached crate has only its metadata.
   */
  readonly files: ReadonlySet<string>;
  /** For a link naming a repository on a host (API.md 7.1): which, and the ref and commit registered. */
  readonly repository?: CheckedRepository;
  /**
   * For a repository link: its `.lifemonitor.yaml` as this registration read it (no `file`: there
   * is none; a `problem`: it is invalid), and the branch globs the workflow follows (API.md 12).
   */
  readonly following?: { file?: string; problem?: string; branches: readonly string[] };
}

/** One problem a check found: of which type, and where. */
export interface IssueFinding {
  type: IssueType;
  /** Where, in a sentence that names the crate's entity or file: `the test suite #test1 has no instances`. */
  detail: string;
}

/**
 * One check of a registration (API.md 12). Adding one is a class implementing this, marked
 * @RegisterIssueCheck(), and a line in a module's providers (docs/extending.md).
 */
export interface IssueCheck {
  /** Every type this check may report (most checks have one). */
  readonly types: readonly IssueType[];
  /**
   * The problems found, none when the crate passes. A check that cannot decide (an upstream it
   * asks is down) throws: the registration goes on without its findings, and the failure is logged.
   */
  check(subject: CheckedCrate): IssueFinding[] | Promise<IssueFinding[]>;
}

/** Registers an IssueCheck class: with this decorator and listed in any module's providers. */
export const RegisterIssueCheck = DiscoveryService.createDecorator<void>();

/** Injection token of the function listing every registered IssueCheck. */
export const ISSUE_CHECKS = Symbol('ISSUE_CHECKS');

/** Every registered check, in registration order; complete once the app's providers exist. */
export type IssueChecks = () => readonly IssueCheck[];

/** ISSUE_CHECKS as the app provides it: every class marked with RegisterIssueCheck. */
export const ISSUE_CHECKS_PROVIDER: Provider = registrationsProvider(ISSUE_CHECKS, RegisterIssueCheck);
