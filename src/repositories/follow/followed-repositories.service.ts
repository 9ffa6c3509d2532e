import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../common/clock.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { AppConfig } from '../../config/app-config.js';
import {
  RepositoryGone,
  RepositoryHosts,
  type RefKind,
  type RepositoryHost,
  type RepositoryLink,
  type RepositoryRef,
} from '../hosts/repository-host.js';
import { UpstreamUnavailable } from '../../crates/index.js';
import { RegistryPort, type FollowFailure } from '../registry-port.js';
import type { FollowedRefEntity, FollowedRefKind } from './entities/followed-ref.entity.js';
import { FollowQueue } from './follow-queue.js';
import { refDecision, type ShownRef } from './follow-rules.js';
import { FollowsRepository, type Claimed, type FollowSubject } from './follows.repository.js';

/**
 * A ref a webhook tells of (API.md 12): a tag created, or a branch pushed to a commit, in the
 * repository `owner/repo` (any case) of the host whose pages are at `site` (RepositoryLink.site).
 */
export type RepositoryRefEvent = { site: string; repository: string } & (
  { kind: 'tag'; name: string } | { kind: 'branch'; name: string; commit: string }
);

/** What a webhook's event did: registrations queued, or nothing (no workflow follows that ref). */
export type RefEventOutcome = 'queued' | 'ignored';

/** Pages of refs read per poll at most: 5,000 branches or tags. */
const MAX_PAGES = 50;
/**
 * The poll interval of a tick run while the timer is off (REFRESH_INTERVAL_SECONDS=0: only
 * wake-ups and ticks run by hand), as the refresh scheduler does: the setting's default.
 */
const INTERVAL_WHEN_OFF_MS = 300_000;

/**
 * Following repositories (API.md 12, 18), on whichever host each is: refs told by webhooks or
 * read by polls become pending registrations, and each is registered (WorkflowsService.register
 * through the RegistryPort, the repository as the crate's source) by the copy that claims it. A
 * host down or rate-limited: tried again at the next poll, never before the rate limit's end (a
 * pause of the host's API, shared by every copy); a refusal is recorded and told to the owner.
 */
@Injectable()
export class FollowedRepositoriesService {
  private readonly logger = new Logger(FollowedRepositoriesService.name);

  constructor(
    private readonly follows: FollowsRepository,
    private readonly hosts: RepositoryHosts,
    private readonly workflows: RegistryPort,
    private readonly queue: FollowQueue,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /**
   * A webhook's ref: recorded for every workflow following that repository, a registration queued
   * where it matches their globs. Nothing is read from the host here; a repository nobody follows
   * costs one indexed read.
   */
  async receive(event: RepositoryRefEvent): Promise<RefEventOutcome> {
    const subjects = await this.follows.following(event.site, event.repository);
    if (subjects.length === 0) {
      return 'ignored';
    }
    const now = new Date(this.clock.nowMs());
    const ref: ShownRef =
      event.kind === 'tag'
        ? { kind: 'tag', name: event.name, commit: null }
        : { kind: 'branch', name: event.name, commit: event.commit };
    let due = 0;
    for (const subject of subjects) {
      due += await this.follows.recordRefs(subject, [ref], now);
    }
    if (due === 0) {
      return 'ignored';
    }
    this.queue.wake();
    return 'queued';
  }

  /**
   * Polls at the pace of the interval in force (API.md 12, settled details): polls and
   * registrations planned under a longer interval set before a restart are due at once.
   */
  async keepToInterval(now: Date): Promise<void> {
    const moved = await this.follows.bringForward(this.nextPoll(now), now);
    if (moved > 0) {
      this.logger.log(`${moved} polls and registrations planned under a longer interval are due now`);
    }
  }

  /**
   * Reads a claimed repository's refs (only the pages changed since their ETags) and records
   * what they change; a failure is recorded and the poll tried again at the next interval.
   */
  async poll(claimed: Claimed<FollowSubject>, now: Date): Promise<void> {
    const subject = claimed.row;
    const { repository } = subject;
    const link = linkOf(repository);
    let host: RepositoryHost;
    let paused: Date | undefined;
    try {
      host = this.hosts.of(link);
      paused = await this.follows.pausedUntil(host.apiUrl(link), now);
    } catch (error) {
      await this.pollFailed(claimed, error, now);
      return;
    }
    if (paused) {
      // Nothing is sent to a host while its rate limit's pause lasts.
      const next = this.nextPoll(now);
      await this.follows.recordPollFailure(
        claimed,
        `${host.name}'s API is paused by its rate limit until ${paused.toISOString()}`,
        paused > next ? paused : next,
        now,
      );
      return;
    }
    const baseline = repository.refsReadAt === null;
    const previous = baseline ? {} : parseEtags(repository.refsEtags);
    const etags: Partial<Record<RefKind, string[]>> = {};
    const shown: ShownRef[] = [];
    try {
      for (const [kind, globs] of [
        ['tags', subject.globs.tags],
        ['heads', subject.globs.branches],
      ] as const) {
        if (globs.length === 0) {
          continue;
        }
        const read = await this.readRefs(host, link, kind, previous[kind] ?? []);
        etags[kind] = read.etags;
        shown.push(
          ...read.refs.map((ref) => ({
            ...ref,
            kind: kind === 'tags' ? ('tag' as const) : ('branch' as const),
          })),
        );
      }
    } catch (error) {
      await this.pollFailed(claimed, error, now);
      return;
    }
    await this.follows.recordRefs(subject, shown, now, {
      claim: claimed.token,
      baseline,
      etags: JSON.stringify(etags),
      nextPollAt: this.nextPoll(now),
    });
  }

  /**
   * Registers a claimed pending ref as a version of its workflow, named by the ref, at its commit
   * (a branch's replaces the version of its name), and records how it ended.
   */
  async attempt(claimed: Claimed<FollowedRefEntity>, now: Date): Promise<void> {
    const ref = claimed.row;
    const subject = await this.follows.subjectOf(ref.repositoryId);
    if (!subject) {
      return; // the workflow went, and its refs with it
    }
    const { repository } = subject;
    const link = linkOf(repository);
    const decision = refDecision(ref.kind, ref.name, subject.globs);
    if (decision.state !== 'pending') {
      // The globs changed since it was queued.
      await this.follows.finishRef(
        claimed,
        { state: decision.state, commit: ref.commit, reason: decision.reason },
        now,
      );
      return;
    }
    let commit: string | null = ref.commit;
    try {
      const host = this.hosts.of(link);
      const paused = await this.follows.pausedUntil(host.apiUrl(link), now);
      if (paused) {
        const reason = `${host.name}'s API is paused by its rate limit until ${paused.toISOString()}`;
        await this.retryLater(claimed, commit, reason, undefined, paused, now);
        return;
      }
      commit ??= (await host.tagCommit(link, ref.name)) ?? null;
      if (commit === null) {
        await this.follows.finishRef(
          claimed,
          {
            state: 'ignored',
            commit: null,
            reason: `the tag '${ref.name}' is no longer in ${link.owner}/${link.repo}`,
          },
          now,
        );
        return;
      }
      const registered = await this.workflows.register(
        { id: subject.ownerId },
        {
          rocLink: host.refLink(link, ref.name),
          version: ref.name,
          uuid: subject.workflowUuid,
          repository: { link, source: { ref: ref.name, commit } },
          replace: ref.kind === 'branch',
        },
      );
      await this.follows.finishRef(
        claimed,
        { state: 'registered', commit, version: registered.version },
        now,
      );
    } catch (error) {
      await this.attemptFailed(claimed, subject, commit, error, now);
    }
  }

  /** The host's API of a repository, for its rate limit's pause; undefined when no host knows it any more. */
  private apiOf(link: RepositoryLink): string | undefined {
    try {
      return this.hosts.of(link).apiUrl(link);
    } catch {
      return undefined;
    }
  }

  private async attemptFailed(
    claimed: Claimed<FollowedRefEntity>,
    subject: FollowSubject,
    commit: string | null,
    error: unknown,
    now: Date,
  ): Promise<void> {
    const ref = claimed.row;
    const where = `${ref.kind} '${ref.name}' of ${subject.repository.owner}/${subject.repository.repo}`;
    if (error instanceof UpstreamUnavailable || !(error instanceof DomainError)) {
      if (!(error instanceof DomainError)) {
        this.logger.error({ err: error }, `registering the ${where} failed unexpectedly; trying again later`);
      }
      const message = error instanceof Error ? error.message : String(error);
      await this.retryLater(
        claimed,
        commit,
        message,
        this.apiOf(linkOf(subject.repository)),
        error instanceof UpstreamUnavailable ? error.retryAt : undefined,
        now,
      );
      return;
    }
    if (error.kind === 'conflict') {
      // The version exists: registered by hand, or by an earlier attempt whose ending was lost.
      await this.follows.finishRef(claimed, { state: 'ignored', commit, reason: error.message }, now);
      return;
    }
    this.logger.log(`the ${where} could not be registered: ${error.message}`);
    await this.follows.finishRef(
      claimed,
      { state: 'failed', commit, reason: error.message },
      now,
      this.failure(subject, { kind: ref.kind, name: ref.name, commit }, error.message),
    );
  }

  private async retryLater(
    claimed: Claimed<FollowedRefEntity>,
    commit: string | null,
    reason: string,
    apiUrl: string | undefined,
    retryAt: Date | undefined,
    now: Date,
  ): Promise<void> {
    if (retryAt && apiUrl !== undefined) {
      await this.follows.pause(apiUrl, retryAt);
    }
    const next = this.nextPoll(now).getTime();
    await this.follows.retryRefLater(
      claimed,
      new Date(Math.max(next, retryAt?.getTime() ?? 0)),
      reason,
      commit,
    );
  }

  private async pollFailed(claimed: Claimed<FollowSubject>, error: unknown, now: Date): Promise<void> {
    const { repository } = claimed.row;
    const message = error instanceof Error ? error.message : String(error);
    if (!(error instanceof DomainError)) {
      this.logger.error({ err: error }, `polling ${repository.owner}/${repository.repo} failed unexpectedly`);
    }
    const retryAt = error instanceof UpstreamUnavailable ? error.retryAt : undefined;
    const apiUrl = this.apiOf(linkOf(repository));
    if (retryAt && apiUrl !== undefined) {
      await this.follows.pause(apiUrl, retryAt);
    }
    const next = this.nextPoll(now);
    await this.follows.recordPollFailure(
      claimed,
      message,
      retryAt && retryAt > next ? retryAt : next,
      now,
      error instanceof RepositoryGone ? this.failure(claimed.row, null, message) : undefined,
    );
  }

  /** Every page of the refs, each asked with its last ETag; pages answered 304 add nothing. */
  private async readRefs(
    host: RepositoryHost,
    link: RepositoryLink,
    kind: RefKind,
    previous: readonly string[],
  ): Promise<{ refs: RepositoryRef[]; etags: string[] }> {
    const refs: RepositoryRef[] = [];
    const seen = new Set<string>();
    const etags: string[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const known = previous[page - 1];
      const answer = await host.refsPage(link, kind, page, known || undefined);
      if (answer.kind === 'unchanged') {
        etags.push(known ?? '');
        // An unchanged page says nothing of whether one follows it: the last reading did.
        if (page >= previous.length) {
          break;
        }
        continue;
      }
      // A host whose pages repeat (a listing that never ends) names a ref once all the same.
      refs.push(...answer.refs.filter((ref) => !seen.has(ref.name) && seen.add(ref.name)));
      etags.push(answer.etag ?? '');
      if (answer.last) {
        break;
      }
    }
    return { refs, etags };
  }

  private nextPoll(now: Date): Date {
    const seconds = this.config.monitoring.refreshIntervalSeconds;
    return new Date(now.getTime() + (seconds > 0 ? seconds * 1000 : INTERVAL_WHEN_OFF_MS));
  }

  private failure(
    subject: FollowSubject,
    ref: { kind: FollowedRefKind; name: string; commit: string | null } | null,
    error: string,
  ): Omit<FollowFailure, 'name' | 'version'> {
    return {
      workflowId: subject.repository.workflowId,
      workflowUuid: subject.workflowUuid,
      ownerId: subject.ownerId,
      repository: `${subject.repository.owner}/${subject.repository.repo}`,
      ref,
      error,
    };
  }
}

/** The repository of a followed repository's row, as its host's parseLink gave it. */
function linkOf(row: { site: string; owner: string; repo: string }): RepositoryLink {
  return { site: row.site, owner: row.owner, repo: row.repo };
}

function parseEtags(stored: string | null): Partial<Record<RefKind, string[]>> {
  if (stored === null) {
    return {};
  }
  try {
    return JSON.parse(stored) as Partial<Record<RefKind, string[]>>;
  } catch {
    return {};
  }
}
