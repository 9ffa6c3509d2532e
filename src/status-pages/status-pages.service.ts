import { Injectable } from '@nestjs/common';
import { IdentityProviders } from '../auth/identity/identity-providers.js';
import type { CookieOptions } from 'express';
import { AuthService } from '../auth/auth.service.js';
import type { Viewer } from '../auth/optional-auth.decorator.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { plainName } from '../common/bidi.js';
import {
  BuildChangesService,
  isFailingStatus,
  staleSentence,
  isFinishedStatus,
  statusMessage,
  TestingServiceRegistry,
  TestStatusService,
  type BuildView,
  type StoredBuild,
} from '../test-monitoring/index.js';
import {
  canEdit,
  latestVersionOf,
  NOT_AVAILABLE,
  StoredTestStatuses,
  toIssueResponse,
  toIssueTypeResponse,
  versionsOf,
  WorkflowsService,
  type AggregateTestStatus,
  type WorkflowEntity,
} from '../workflows/index.js';
import { historyChart, historyStrip, historySummary } from './chart.js';
import { safeBuildHref, safeHref } from '../common/safe-href.js';
import { renderPage } from './templates.js';
import { selectWall } from './wall.js';
import { utcMinute } from '../common/utc-minute.js';
import { AppConfig } from '../config/app-config.js';

/** Workflows per page of /status. */
export const STATUS_PAGE_SIZE = 50;
/** Tiles a wall screen shows at most; the rest, least urgent by the order, are counted. */
export const WALL_SIZE = 100;

/** How a status page is shown: a wall screen's layout, and the refresh it asked for (seconds). */
export interface PageOptions {
  refresh?: number;
}
const HISTORY_DAYS = 30;

/** The CI services' failures (API.md 16): a page that asked one says so above what it answered. */
const UPSTREAM_KINDS: ReadonlySet<string> = new Set([
  'upstream_failed',
  'upstream_timeout',
  'upstream_rate_limited',
  'gateway_timeout',
]);

/** What a runner's fields are called on the page of what changed, in its order. */
const RUNNER_FIELDS = [
  ['os', 'Operating system'],
  ['image', 'Image'],
  ['version', 'Image version'],
] as const;

const MESSAGES: Record<AggregateTestStatus, string> = {
  all_passing: 'passing',
  some_passing: 'some passing',
  all_failing: 'failing',
  not_available: 'no builds',
};

interface Shown {
  iso: string;
  text: string;
}

function shown(date: Date): Shown {
  return { iso: date.toISOString(), text: utcMinute(date) };
}

function duration(seconds: number): string {
  if (seconds < 60) {
    return `${seconds} s`;
  }
  const minutes = Math.floor(seconds / 60);
  return minutes < 60
    ? `${minutes} min ${seconds % 60} s`
    : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** A workflow to show, with its latest version's status (`latestBuild` null: no build at all yet). */
interface Listed {
  workflow: WorkflowEntity;
  status?: { aggregate: AggregateTestStatus; latestBuild: unknown };
}

/** A workflow as the list and the wall show it. */
interface Row {
  uuid: string;
  name: string;
  public: boolean;
  version: string;
  aggregate: AggregateTestStatus;
  message: string;
  stale: boolean;
  lastChecked: Shown | null;
  strip: string;
  stripText: string;
}

/** "2 passing, 1 failing": how many rows are in each state. */
function countsOf(rows: readonly Row[]): string {
  const counts = new Map<AggregateTestStatus, number>();
  for (const row of rows) {
    counts.set(row.aggregate, (counts.get(row.aggregate) ?? 0) + 1);
  }
  return describeCounts(counts);
}

/** "2 passing, 1 failing", from the number in each state. */
function describeCounts(counts: ReadonlyMap<AggregateTestStatus, number>): string {
  return (['all_passing', 'some_passing', 'all_failing', 'not_available'] as const)
    .filter((aggregate) => counts.has(aggregate))
    .map(
      (aggregate) =>
        `${counts.get(aggregate)} ${aggregate === 'not_available' ? 'without builds' : MESSAGES[aggregate]}`,
    )
    .join(', ');
}

/** A sign-in through the pages' form: a session to start, or the form again with what went wrong. */
export type SignInOutcome =
  | { kind: 'signed-in'; token: string; cookie: CookieOptions; next: string }
  | { kind: 'refused'; status: 400 | 403 | 429; retryAfterSeconds?: number; page: string };

/**
 * Where a sign-in may send the browser back to: a page of these pages (a build's page of what
 * changed too, API.md 16) or the authorization endpoint's consent page (API.md 15), never another
 * site.
 */
const NEXT_PAGE =
  /^\/(?:status(?:\/[A-Za-z0-9-]*(?:\/builds\/[A-Za-z0-9-]+\/[A-Za-z0-9._~%-]+\/changes)?)?|oauth2\/authorize)(?:\?[^\s#\\]*)?$/;
/** An authorization request carries its redirect URI, state and PKCE challenge: longer than a status page's address. */
export const MAX_NEXT = 4096;

function nextPage(next: string | null | undefined): string {
  return next && next.length <= MAX_NEXT && NEXT_PAGE.test(next) ? next : '/status';
}

/** The same bounds as POST /api/v1/auth's body (LoginDto). */
const CREDENTIAL_LENGTH = { min: 1, max: 256 };

/**
 * The HTML status pages (API.md 5.4): the same reads as the API, under the same visibility rule,
 * rendered on the server.
 */
@Injectable()
export class StatusPagesService {
  constructor(
    private readonly workflows: WorkflowsService,
    private readonly status: TestStatusService,
    private readonly clock: Clock,
    private readonly auth: AuthService,
    private readonly services: TestingServiceRegistry,
    private readonly stored: StoredTestStatuses,
    private readonly config: AppConfig,
    private readonly providers: IdentityProviders,
    private readonly changesOf: BuildChangesService,
  ) {}

  /** The sign-in form; after signing in the browser goes to `next` (a status page, else /status). */
  signInPage(next: string | undefined): string {
    return renderPage('sign-in', { next: nextPage(next), username: '', providers: this.providers.all() });
  }

  /**
   * The form's sign-in: AuthService.login itself, so the token, the session cookie and the limit
   * on failed attempts (per address and per username, shared with POST /api/v1/auth) are the API's.
   * Wrong credentials and the limit show the form again with the reason; other faults are thrown.
   */
  async signIn(form: URLSearchParams, address: string): Promise<SignInOutcome> {
    const username = form.get('username') ?? '';
    const password = form.get('password') ?? '';
    const next = nextPage(form.get('next'));
    const again = (status: 400 | 403 | 429, error: string, retryAfterSeconds?: number): SignInOutcome => ({
      kind: 'refused',
      status,
      retryAfterSeconds,
      page: renderPage('sign-in', { next, username, error, providers: this.providers.all() }),
    });
    const fits = (text: string) =>
      text.length >= CREDENTIAL_LENGTH.min && text.length <= CREDENTIAL_LENGTH.max;
    if (!fits(username) || !fits(password)) {
      return again(
        400,
        `Enter a username and a password (each ${CREDENTIAL_LENGTH.max} characters at most).`,
      );
    }
    try {
      const issued = await this.auth.login(username, password, address);
      return { kind: 'signed-in', token: issued.token, cookie: this.auth.sessionCookieOptions(), next };
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'forbidden') {
        return again(403, 'Wrong username or password, or the account is disabled.');
      }
      if (error instanceof DomainError && error.kind === 'rate_limited') {
        const seconds = Math.max(1, Math.ceil(error.retryAfterSeconds ?? 60));
        return again(429, `Too many failed sign-ins: try again in ${seconds} s.`, seconds);
      }
      throw error;
    }
  }

  /** Ends the session: the token is revoked as DELETE /api/v1/auth revokes it; the cookie's attributes to clear it. */
  async signOut(token: string | undefined): Promise<CookieOptions> {
    await this.auth.logout(token);
    return this.auth.sessionCookieOptions();
  }

  /** /status: a page of what `GET /workflows` lists for the viewer, newest first. */
  async overview(viewer: Viewer, page: number, options: PageOptions = {}): Promise<string> {
    const now = new Date(this.clock.nowMs());
    const views = await this.workflows.listVisible(
      viewer,
      { limit: STATUS_PAGE_SIZE + 1, offset: (page - 1) * STATUS_PAGE_SIZE },
      true,
    );
    const rows = await this.rowsOf(views.slice(0, STATUS_PAGE_SIZE), now);
    const first = (page - 1) * STATUS_PAGE_SIZE + 1;
    const range =
      page > 1 || views.length > STATUS_PAGE_SIZE
        ? `Workflows ${first}–${first + rows.length - 1}`
        : `${rows.length} ${rows.length === 1 ? 'workflow' : 'workflows'}`;
    const here = page > 1 ? `/status?page=${page}` : '/status';
    return renderPage('overview', {
      viewer: viewer?.username,
      here,
      refresh: options.refresh,
      page,
      rows,
      summary: `${range}: ${countsOf(rows)}`,
      newer: page > 1 ? (page === 2 ? '/status' : `/status?page=${page - 1}`) : undefined,
      older: views.length > STATUS_PAGE_SIZE ? `/status?page=${page + 1}` : undefined,
    });
  }

  /**
   * /status/wall: every workflow the viewer may see, failing first (then some passing, without
   * builds, passing; newest first within each), as tiles across the whole width, for a screen on a
   * wall; refreshed by the page itself when asked (no script). The order and the counts come from
   * the stored statuses' indexes; only the tiles shown have their status read.
   */
  async wall(viewer: Viewer, options: PageOptions = {}): Promise<string> {
    const now = new Date(this.clock.nowMs());
    const wall = await selectWall(
      {
        latestIn: (state, limit) => this.stored.latestIn(viewer, state, limit),
        counts: (states) => this.stored.counts(viewer, states),
      },
      WALL_SIZE,
    );
    const summaries = await this.status.summaries(wall.workflows.map((w) => latestVersionOf(w).id));
    const tiles = await this.rowsOf(
      wall.workflows.map((workflow) => ({
        workflow,
        status: summaries.get(latestVersionOf(workflow).id) ?? NOT_AVAILABLE,
      })),
      now,
    );
    return renderPage('wall', {
      viewer: viewer?.username,
      here: `/status/wall${options.refresh ? `?refresh=${options.refresh}` : ''}`,
      refresh: options.refresh,
      tiles,
      more: Math.max(0, wall.total - WALL_SIZE),
      summary: `${wall.total} ${wall.total === 1 ? 'workflow' : 'workflows'}: ${describeCounts(wall.counts)}`,
    });
  }

  /** The rows of a list of workflows: status, last check, stale, the last 30 days (three queries in all). */
  private async rowsOf(views: readonly Listed[], now: Date): Promise<Row[]> {
    const overviews = await this.status.overviews(
      views.map((view) => latestVersionOf(view.workflow).id),
      HISTORY_DAYS,
      now,
    );
    return views.map((view) => {
      const latest = latestVersionOf(view.workflow);
      const aggregate = view.status?.aggregate ?? 'not_available';
      const overview = overviews.get(latest.id);
      const days = overview?.days ?? [];
      return {
        uuid: view.workflow.uuid,
        name: latest.name,
        public: view.workflow.public,
        version: latest.version,
        aggregate,
        message: statusMessage(aggregate, view.status?.latestBuild === null ? latest.version : undefined),
        stale: overview?.stale ?? false,
        lastChecked: overview?.lastChecked ? shown(overview.lastChecked) : null,
        strip: historyStrip(days),
        stripText: historySummary(days),
      };
    });
  }

  /**
   * /status/{uuid}/builds/{instance}/{build}/changes: GET /instances/{uuid}/builds/{id}/changes
   * (API.md 16) for a person, under the same visibility rule; an instance of another workflow is
   * not_found. The CI service's refusal, limit or silence stays its 502, 503 or 504, its message
   * led by what could not be done.
   */
  async changes(
    workflowUuid: string,
    instanceUuid: string,
    buildId: string,
    viewer: Viewer,
  ): Promise<string> {
    const view = await this.changesOf
      .changes(instanceUuid, buildId, viewer, workflowUuid)
      .catch((error: unknown) => {
        throw error instanceof DomainError && UPSTREAM_KINDS.has(error.kind)
          ? new DomainError(
              error.kind,
              `The CI service could not be asked what changed: ${error.message}`,
              [],
              error.retryAfterSeconds,
            )
          : error;
      });
    const { build, lastPassing, commits, runner } = view;
    const version = view.instance.suite?.version;
    const instanceName = view.instance.name ?? view.instance.rocInstance;
    const buildOf = (shownBuild: StoredBuild, headSha: string | null) => ({
      id: shownBuild.buildId,
      status: shownBuild.status,
      started: shown(shownBuild.startedAt),
      duration: duration(shownBuild.durationSeconds),
      url: safeBuildHref(shownBuild.url),
      commit: headSha,
      log: `/instances/${instanceUuid}/builds/${encodeURIComponent(shownBuild.buildId)}/logs`,
    });
    return renderPage('changes', {
      viewer: viewer?.username,
      title: `What changed before build ${plainName(build.buildId)}`,
      here: `/status/${workflowUuid}/builds/${instanceUuid}/${encodeURIComponent(buildId)}/changes`,
      back: `/status/${workflowUuid}${version ? `?version=${encodeURIComponent(version.version)}` : ''}`,
      workflow: version?.name ?? workflowUuid,
      version: version?.version,
      instance: instanceName,
      service: view.instance.service?.type ?? 'unknown',
      build: buildOf(build, commits.to),
      lastPassing: lastPassing && buildOf(lastPassing, commits.from),
      compare: safeHref(commits.compareUrl),
      runner: [
        ...RUNNER_FIELDS.map(([field, label]) => ({
          label,
          before: runner.before?.[field] ?? null,
          after: runner.after?.[field] ?? null,
        })),
        {
          label: 'Labels',
          before: runner.before?.labels.join(', ') || null,
          after: runner.after?.labels.join(', ') || null,
        },
      ],
      json: `/instances/${instanceUuid}/builds/${encodeURIComponent(buildId)}/changes`,
      failedJobs: view.failedJobs.map((job) => ({ ...job, url: safeHref(job.url) })),
      failedSteps: view.failedSteps,
    });
  }

  /** /workflows/issues.html: the types of issue the repository checks report (API.md 12). */
  issueTypes(viewer: Viewer, back: string | undefined): string {
    return renderPage('issue-types', {
      viewer: viewer?.username,
      here: '/workflows/issues.html',
      back,
      types: this.workflows.issueTypes().map(toIssueTypeResponse),
    });
  }

  /** /status/{uuid}: one workflow at a version (default latest). not_found as the API's reads. */
  async workflow(
    uuid: string,
    version: string | undefined,
    viewer: Viewer,
    options: PageOptions = {},
  ): Promise<string> {
    const now = new Date(this.clock.nowMs());
    const status = await this.status.workflowStatus(uuid, version, viewer, now);
    const { suites, lastChecks } = await this.workflows.suites(uuid, status.version.version, viewer);
    const follow = await this.workflows.followOf(status.workflow);
    const days =
      (await this.status.overviews([status.version.id], HISTORY_DAYS, now)).get(status.version.id)?.days ??
      [];
    const builds = new Map<number, BuildView>(status.latestBuilds.map((view) => [view.instance.id, view]));
    const issues = await this.workflows.issuesOf(status.version);
    const mayRun = viewer !== undefined && canEdit(status.workflow, viewer);
    const aggregate = status.aggregate;
    const unbuilt = status.latestBuilds.length === 0;
    // A version without builds of its own yet (API.md 7.2) shows the one before it beside it.
    const versions = versionsOf(status.workflow);
    const before = versions[versions.findIndex((other) => other.id === status.version.id) - 1];
    const previous =
      unbuilt && before ? await this.status.workflowStatus(uuid, before.version, viewer, now) : undefined;
    return renderPage('workflow', {
      viewer: viewer?.username,
      title: plainName(status.version.name),
      refresh: options.refresh,
      here: `/status/${uuid}${version === undefined ? '' : `?version=${encodeURIComponent(version)}`}`,
      uuid,
      name: status.version.name,
      public: status.workflow.public,
      version: status.version.version,
      isLatest: latestVersionOf(status.workflow).id === status.version.id,
      aggregate,
      message: statusMessage(
        aggregate,
        unbuilt ? status.version.version : undefined,
        status.infrastructureOnly,
      ),
      previous: previous && {
        version: previous.version.version,
        aggregate: previous.aggregate,
        message: statusMessage(
          previous.aggregate,
          previous.latestBuilds.length === 0 ? previous.version.version : undefined,
          previous.infrastructureOnly,
        ),
        stale: previous.stale,
      },
      stale: status.stale,
      // API.md 16: why the status may no longer hold, naming the instances.
      staleWhy: status.staleness.map((finding) =>
        staleSentence(
          finding.reason,
          finding.instances.map(
            (instance) => `‘${plainName(instance.name ?? instance.rocInstance ?? instance.uuid)}’`,
          ),
          this.config.monitoring.staleAfterDays,
        ),
      ),
      // Without a finished build, the first line says why when checks failed (not "no builds yet").
      failedChecks:
        aggregate === 'not_available'
          ? status.failedChecks.map((failed) => ({
              name: failed.instance.name ?? failed.instance.rocInstance ?? failed.instance.uuid,
              error: failed.error,
            }))
          : [],
      lastChecked: status.lastChecked ? shown(status.lastChecked) : null,
      lastCheck: status.lastCheck && { ...shown(status.lastCheck.at), ok: status.lastCheck.ok },
      badge: `/workflows/${uuid}/badge.svg?version=${encodeURIComponent(status.version.version)}`,
      chart: historyChart(days),
      chartText: historySummary(days),
      issues: issues.map(toIssueResponse),
      suites: suites.map((suite) => ({
        name: suite.name ?? suite.rocSuite,
        instances: (suite.instances ?? []).map((instance) => {
          const view = builds.get(instance.id);
          const check = lastChecks.get(instance.id);
          return {
            name: instance.name ?? instance.rocInstance,
            service: instance.service?.type ?? 'unknown',
            resource: instance.resource,
            resourceUrl:
              instance.service && instance.uncheckedReason === null
                ? this.services.resourcePage(instance.service.type, instance.service.url, instance.resource)
                : undefined,
            // Registered from a crate that gave it no resource its service can check (API.md 12).
            never: instance.uncheckedReason ?? undefined,
            lastCheck: check ? { ...shown(check.at), ok: check.ok, error: check.error } : undefined,
            // "Run tests now" (API.md 11): for the owner and admins, on an instance that is checked.
            run:
              mayRun && instance.service && instance.uncheckedReason === null
                ? `/status/${uuid}/instances/${instance.uuid}/builds`
                : undefined,
            build: view
              ? {
                  id: view.build.buildId,
                  status: view.build.status,
                  failure: view.build.failure && {
                    class: view.build.failure.class,
                    reason: view.build.failure.reason,
                    evidence: view.build.failure.evidence.join('\n'),
                  },
                  started: shown(view.build.startedAt),
                  duration: duration(view.build.durationSeconds),
                  url: safeBuildHref(view.build.url),
                  log: `/instances/${instance.uuid}/builds/${encodeURIComponent(view.build.buildId)}/logs`,
                  // API.md 17: a managed instance's queued or running build can be stopped by whoever may run it.
                  cancel:
                    mayRun && instance.managed && !isFinishedStatus(view.build.status)
                      ? `/status/${uuid}/instances/${instance.uuid}/builds/${encodeURIComponent(view.build.buildId)}/cancel`
                      : undefined,
                  // API.md 16: beside a failed build, what changed since the last passing one.
                  changes: isFailingStatus(view.build.status)
                    ? `/status/${uuid}/builds/${instance.uuid}/${encodeURIComponent(view.build.buildId)}/changes`
                    : undefined,
                }
              : undefined,
          };
        }),
      })),
      versions: versions.map((other) => ({
        version: other.version,
        current: other.id === status.version.id,
        registered: shown(other.registeredAt),
      })),
      follow: follow && {
        repository: `${follow.owner}/${follow.repo}`,
        url: `${follow.site}/${[...follow.owner.split('/'), follow.repo].map(encodeURIComponent).join('/')}`,
        tags: follow.globs.tags,
        branches: follow.globs.branches,
        source:
          follow.source === 'api'
            ? 'set through the API'
            : follow.source === 'file'
              ? 'from .lifemonitor.yaml'
              : '',
        lastPoll: follow.polledAt ? { at: shown(follow.polledAt), error: follow.pollError } : null,
        refs: follow.refs.map((ref) => ({
          kind: ref.kind,
          name: ref.name,
          state: ref.state,
          version: ref.version,
          reason: ref.reason,
          at: shown(ref.updatedAt),
        })),
      },
    });
  }
}
