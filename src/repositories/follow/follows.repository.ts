import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, In, LessThan, Not, Repository, type EntityManager } from 'typeorm';
import { claimDueRows } from '../../database/claim-due-rows.js';
import { insertMissing, lockRows } from '../../database/dialect.js';
import { retryOnDeadlock } from '../../database/retry-on-deadlock.js';
import { RegistryPort, type FollowFailure, type FollowFailureSink } from '../registry-port.js';
import type { RepositoryLink } from '../hosts/repository-host.js';
import { FollowedRefEntity, type FollowedRefState } from './entities/followed-ref.entity.js';
import { FollowedRepositoryEntity } from './entities/followed-repository.entity.js';
import { GithubApiPauseEntity } from './entities/github-api-pause.entity.js';
import {
  followColumn,
  followInForce,
  followsAnything,
  refChanges,
  sameGlobs,
  type FollowGlobs,
  type ShownRef,
} from './follow-rules.js';
import type { FollowView } from './follow-view.js';

/**
 * The registry's entities, by name: following reads who a workflow is and its latest version in
 * its own queries, without importing the registry (which imports following).
 */
const REGISTRY_WORKFLOW = 'WorkflowEntity';
const REGISTRY_VERSION = 'WorkflowVersionEntity';

/** What following reads of a registry's workflow. */
interface RegistryWorkflow {
  id: number;
  uuid: string;
  ownerId: number;
}

/** Refs a workflow reply shows: what following did lately. */
export const RECENT_REFS = 20;
/** Error texts are cut to their column. */
const ERROR_LENGTH = 1024;

/** A repository as following works on it: its row, with its workflow's uuid and owner. */
export interface FollowSubject {
  repository: FollowedRepositoryEntity;
  workflowUuid: string;
  ownerId: number;
  globs: FollowGlobs;
}

/** A row claimed by this copy: every write of the claimant is conditional on `token`. */
export interface Claimed<T> {
  row: T;
  token: string;
}

/** How a pending ref's attempt ended. */
export interface RefOutcome {
  state: Exclude<FollowedRefState, 'pending'>;
  commit: string | null;
  version?: string;
  reason?: string;
}

/**
 * All SQL of following repositories (API.md 12): what each workflow's repository follows, the
 * refs met and what became of them, and the pauses of hosts' APIs. Claims (claim-due-rows.ts) let several
 * copies share polls and registrations, one copy per row at a time; a ref's unique key makes a
 * new tag one row, whatever the number of copies and events telling of it.
 */
@Injectable()
export class FollowsRepository {
  private claims = 0;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(FollowedRepositoryEntity)
    private readonly repositories: Repository<FollowedRepositoryEntity>,
    @InjectRepository(FollowedRefEntity) private readonly refs: Repository<FollowedRefEntity>,
    @InjectRepository(GithubApiPauseEntity) private readonly pauses: Repository<GithubApiPauseEntity>,
    @Inject(RegistryPort) private readonly events: FollowFailureSink,
  ) {}

  /**
   * In a registration's transaction: the repository the workflow's new version came from, and
   * the globs of its `.lifemonitor.yaml` (null without a valid one). When the globs in force
   * change, following begins again (the refs there are then are only noted). True when a poll is
   * due now.
   */
  async recordSource(
    tx: EntityManager,
    workflowId: number,
    source: RepositoryLink & { fileFollow: FollowGlobs | null },
    now: Date,
  ): Promise<boolean> {
    const existing = await this.lockedOf(tx, workflowId);
    const fileFollow = followColumn.to(source.fileFollow);
    if (!existing) {
      const follows = followsAnything(followInForce(null, source.fileFollow).globs);
      await tx.insert(FollowedRepositoryEntity, {
        ...this.fresh(workflowId, source),
        fileFollow,
        nextPollAt: follows ? now : null,
      });
      return follows;
    }
    return this.changeFollow(
      tx,
      existing,
      { site: source.site, owner: source.owner, repo: source.repo, fileFollow },
      now,
    );
  }

  /**
   * `PUT /workflows/{uuid}` `follow` (API.md 12): sets (or, with null, clears) the API's globs of
   * the workflow's repository, `link` when it has no row yet. True when a poll is due now.
   */
  async setApiFollow(
    workflowId: number,
    link: RepositoryLink,
    globs: FollowGlobs | null,
    now: Date,
  ): Promise<boolean> {
    return retryOnDeadlock(() =>
      this.dataSource.transaction(async (tx) => {
        const apiFollow = followColumn.to(globs);
        const existing = await this.lockedOf(tx, workflowId);
        if (!existing) {
          const follows = followsAnything(followInForce(globs, null).globs);
          await insertMissing(tx, FollowedRepositoryEntity, [
            { ...this.fresh(workflowId, link), apiFollow, nextPollAt: follows ? now : null },
          ]);
          return follows;
        }
        return this.changeFollow(tx, existing, { apiFollow }, now);
      }),
    );
  }

  /** The globs the API set for the workflow's repository; null when it never set them. */
  async apiFollowOf(workflowUuid: string): Promise<FollowGlobs | null> {
    const row = await this.repositories
      .createQueryBuilder('f')
      .innerJoin(REGISTRY_WORKFLOW, 'w', 'w.id = f.workflow_id')
      .select(['f.id', 'f.apiFollow'])
      .where('w.uuid = :workflowUuid', { workflowUuid })
      .getOne();
    return followColumn.from(row?.apiFollow ?? null);
  }

  /** What the workflow's repository follows, and what following did lately; undefined without one. */
  async followOf(workflowId: number): Promise<FollowView | undefined> {
    const row = await this.repositories.findOneBy({ workflowId });
    if (!row) {
      return undefined;
    }
    const refs = await this.refs.find({
      where: { repositoryId: row.id, state: Not('seen') },
      order: { updatedAt: 'DESC', id: 'DESC' },
      take: RECENT_REFS,
    });
    const { globs, source } = followInForce(
      followColumn.from(row.apiFollow),
      followColumn.from(row.fileFollow),
    );
    return {
      site: row.site,
      owner: row.owner,
      repo: row.repo,
      globs,
      source,
      polledAt: row.polledAt,
      pollError: row.pollError,
      goneAt: row.goneAt,
      refs,
    };
  }

  /** The repositories named `owner/repo` (any case) on the host at `site` that follow something, for a webhook. */
  async following(site: string, fullName: string): Promise<FollowSubject[]> {
    const rows = await this.repositories.find({ where: { fullName: fullName.toLowerCase(), site } });
    const subjects = await this.subjects(rows);
    return subjects.filter((subject) => followsAnything(subject.globs));
  }

  /** Claims up to `batch` repositories due for a poll, for `claimMs`. */
  async claimDuePolls(
    now: Date,
    owner: string,
    batch: number,
    claimMs: number,
  ): Promise<Claimed<FollowSubject>[]> {
    const token = this.token(owner);
    const rows = await claimDueRows(this.repositories, {
      dueColumn: 'next_poll_at',
      now,
      token,
      batch,
      claimMs,
    });
    return (await this.subjects(rows)).map((row) => ({ row, token }));
  }

  /** Claims up to `batch` refs whose registration is due, for `claimMs`. */
  async claimDueRefs(
    now: Date,
    owner: string,
    batch: number,
    claimMs: number,
  ): Promise<Claimed<FollowedRefEntity>[]> {
    const token = this.token(owner);
    const rows = await claimDueRows(this.refs, { dueColumn: 'next_attempt_at', now, token, batch, claimMs });
    return rows.map((row) => ({ row, token }));
  }

  /**
   * Makes due at `now` the polls and pending registrations planned after `limit`, under a longer
   * interval than the one in force. A host's rate-limit pause is its own row and still holds.
   * One UPDATE per table over its due-time index: copies starting together move each row once.
   */
  async bringForward(limit: Date, now: Date): Promise<number> {
    const polls = await retryOnDeadlock(() =>
      this.repositories
        .createQueryBuilder()
        .update()
        .set({ nextPollAt: now })
        .where('next_poll_at > :limit', { limit })
        .execute(),
    );
    const refs = await retryOnDeadlock(() =>
      this.refs
        .createQueryBuilder()
        .update()
        .set({ nextAttemptAt: now })
        .where('next_attempt_at > :limit', { limit })
        .execute(),
    );
    return (polls.affected ?? 0) + (refs.affected ?? 0);
  }

  /** The repository of a ref, with its workflow; undefined when the workflow is gone. */
  async subjectOf(repositoryId: number): Promise<FollowSubject | undefined> {
    const row = await this.repositories.findOneBy({ id: repositoryId });
    return row ? (await this.subjects([row]))[0] : undefined;
  }

  /**
   * Records refs a webhook told of, or a poll read, in one transaction, each change as refChanges
   * decides it; a poll (`poll`) also stores its ETags and next time, if its claim still holds.
   * `baseline`: the refs are only noted. Returns how many refs became due for registration.
   */
  async recordRefs(
    subject: FollowSubject,
    shown: readonly ShownRef[],
    now: Date,
    poll?: { claim: string; baseline: boolean; etags: string; nextPollAt: Date | null },
  ): Promise<number> {
    return retryOnDeadlock(() =>
      this.dataSource.transaction(async (tx) => {
        const repositoryId = subject.repository.id;
        // A webhook tells of one ref: its row is read alone. A poll compares every one.
        const known = await tx.find(FollowedRefEntity, {
          select: { id: true, kind: true, name: true, commit: true, state: true },
          where:
            poll || shown.length === 0
              ? { repositoryId }
              : { repositoryId, name: In([...new Set(shown.map((ref) => ref.name))]) },
        });
        const changes = refChanges(known, shown, subject.globs, poll?.baseline ?? false);
        let due = 0;
        const fresh = changes.flatMap((change) => (change.kind === 'new' ? [change] : []));
        for (let at = 0; at < fresh.length; at += 200) {
          await insertMissing(
            tx,
            FollowedRefEntity,
            fresh.slice(at, at + 200).map((change) => ({
              repositoryId,
              kind: change.ref.kind,
              name: change.ref.name,
              commit: change.ref.commit,
              state: change.state,
              reason: change.reason ?? null,
              nextAttemptAt: change.state === 'pending' ? now : null,
              updatedAt: now,
            })),
          );
        }
        due += fresh.filter((change) => change.state === 'pending').length;
        for (const change of changes) {
          if (change.kind !== 'moved') {
            continue;
          }
          // Conditional on the commit read: of two copies moving one branch, one wins.
          const moved = await tx
            .createQueryBuilder()
            .update(FollowedRefEntity)
            .set({
              commit: change.to,
              state: change.state,
              reason: change.reason ?? null,
              version: null,
              attempts: 0,
              nextAttemptAt: change.state === 'pending' ? now : null,
              updatedAt: now,
            })
            .where('id = :id', { id: change.id })
            .andWhere(change.from === null ? 'commit_sha IS NULL' : 'commit_sha = :from', {
              from: change.from,
            })
            .execute();
          if ((moved.affected ?? 0) > 0 && change.state === 'pending') {
            due++;
          }
        }
        if (poll) {
          await tx.update(
            FollowedRepositoryEntity,
            { id: repositoryId, claimOwner: poll.claim },
            {
              refsReadAt: now,
              refsEtags: poll.etags,
              polledAt: now,
              pollError: null,
              goneAt: null,
              nextPollAt: poll.nextPollAt,
              claimOwner: null,
              claimUntil: null,
            },
          );
        }
        return due;
      }),
    );
  }

  /**
   * A poll that failed: why, and when to poll again. `gone`: the host answered 404 for the
   * repository; the first poll to find it so tells the owner (`failure`), once.
   */
  async recordPollFailure(
    claimed: Claimed<FollowSubject>,
    error: string,
    nextPollAt: Date | null,
    now: Date,
    gone?: Omit<FollowFailure, 'name' | 'version'>,
  ): Promise<void> {
    await retryOnDeadlock(() =>
      this.dataSource.transaction(async (tx) => {
        const { id } = claimed.row.repository;
        const base = {
          pollError: error.slice(0, ERROR_LENGTH),
          polledAt: now,
          nextPollAt,
          claimOwner: null,
          claimUntil: null,
        };
        if (!gone) {
          await tx.update(FollowedRepositoryEntity, { id, claimOwner: claimed.token }, base);
          return;
        }
        // Only the update that finds it not gone yet tells of it.
        const newlyGone = await tx
          .createQueryBuilder()
          .update(FollowedRepositoryEntity)
          .set({ ...base, goneAt: now })
          .where('id = :id AND claim_owner = :token AND gone_at IS NULL', { id, token: claimed.token })
          .execute();
        if ((newlyGone.affected ?? 0) > 0) {
          await this.events.followFailed(tx, { ...gone, ...(await this.latestOf(tx, gone.workflowId)) }, now);
          return;
        }
        await tx.update(FollowedRepositoryEntity, { id, claimOwner: claimed.token }, base);
      }),
    );
  }

  /**
   * Ends a pending ref's attempt, if the claim still holds and the ref still names the commit it
   * was claimed at (a push meanwhile leaves it pending at the new commit, due at once). A failure
   * tells the owner (`failure`) in the same transaction: once. False when it was not written.
   */
  async finishRef(
    claimed: Claimed<FollowedRefEntity>,
    outcome: RefOutcome,
    now: Date,
    failure?: Omit<FollowFailure, 'name' | 'version'>,
  ): Promise<boolean> {
    return retryOnDeadlock(() =>
      this.dataSource.transaction(async (tx) => {
        const { row, token } = claimed;
        const finished = await tx
          .createQueryBuilder()
          .update(FollowedRefEntity)
          .set({
            state: outcome.state,
            commit: outcome.commit,
            version: outcome.version ?? null,
            reason: outcome.reason?.slice(0, ERROR_LENGTH) ?? null,
            attempts: row.attempts + 1,
            nextAttemptAt: null,
            claimOwner: null,
            claimUntil: null,
            updatedAt: now,
          })
          .where('id = :id AND claim_owner = :token', { id: row.id, token })
          .andWhere(row.commit === null ? 'commit_sha IS NULL' : 'commit_sha = :commit', {
            commit: row.commit,
          })
          .andWhere("state = 'pending'")
          .execute();
        if ((finished.affected ?? 0) === 0) {
          await tx.update(
            FollowedRefEntity,
            { id: row.id, claimOwner: token },
            { claimOwner: null, claimUntil: null },
          );
          return false;
        }
        if (failure) {
          await this.events.followFailed(
            tx,
            { ...failure, ...(await this.latestOf(tx, failure.workflowId)) },
            now,
          );
        }
        return true;
      }),
    );
  }

  /** A pending ref's attempt that did not happen (the host down or rate-limited): tried again at `at`. */
  async retryRefLater(
    claimed: Claimed<FollowedRefEntity>,
    at: Date,
    reason: string,
    commit: string | null,
  ): Promise<void> {
    const { row, token } = claimed;
    await this.refs.update(
      { id: row.id, claimOwner: token, state: 'pending' },
      {
        nextAttemptAt: at,
        reason: reason.slice(0, ERROR_LENGTH),
        attempts: row.attempts + 1,
        ...(row.commit === null && commit !== null ? { commit } : {}),
        claimOwner: null,
        claimUntil: null,
      },
    );
  }

  /** A host's API paused until `until` for every copy (a later pause already set is kept). */
  async pause(apiUrl: string, until: Date): Promise<void> {
    // Whole seconds, rounded up: MariaDB would cut the milliseconds and end the pause early.
    const pausedUntil = new Date(Math.ceil(until.getTime() / 1000) * 1000);
    await retryOnDeadlock(() =>
      this.dataSource.transaction(async (tx) => {
        await insertMissing(tx, GithubApiPauseEntity, [{ apiUrl, pausedUntil }]);
        await tx.update(
          GithubApiPauseEntity,
          { apiUrl, pausedUntil: LessThan(pausedUntil) },
          { pausedUntil },
        );
      }),
    );
  }

  /** The end of a host's API's pause, when it is paused at `now`. */
  async pausedUntil(apiUrl: string, now: Date): Promise<Date | undefined> {
    const row = await this.pauses.findOneBy({ apiUrl });
    return row && row.pausedUntil > now ? row.pausedUntil : undefined;
  }

  private lockedOf(tx: EntityManager, workflowId: number): Promise<FollowedRepositoryEntity | null> {
    return lockRows(
      tx
        .createQueryBuilder(FollowedRepositoryEntity, 'f')
        .where('f.workflowId = :workflowId', { workflowId }),
      'write',
    ).getOne();
  }

  private fresh(workflowId: number, link: RepositoryLink): Partial<FollowedRepositoryEntity> {
    return {
      workflowId,
      fullName: `${link.owner}/${link.repo}`.toLowerCase(),
      site: link.site,
      owner: link.owner,
      repo: link.repo,
      apiFollow: null,
      fileFollow: null,
    };
  }

  /**
   * Applies a change of the repository or of either source of globs. A new repository forgets the
   * old one's refs; new globs in force make following begin again (the next poll, due now, only
   * notes the refs there are). True when a poll is due now.
   */
  private async changeFollow(
    tx: EntityManager,
    existing: FollowedRepositoryEntity,
    change: Partial<Pick<FollowedRepositoryEntity, 'site' | 'owner' | 'repo' | 'apiFollow' | 'fileFollow'>>,
    now: Date,
  ): Promise<boolean> {
    const next = { ...existing, ...change };
    next.fullName = `${next.owner}/${next.repo}`.toLowerCase();
    const before = followInForce(
      followColumn.from(existing.apiFollow),
      followColumn.from(existing.fileFollow),
    );
    const after = followInForce(followColumn.from(next.apiFollow), followColumn.from(next.fileFollow));
    const moved = next.fullName !== existing.fullName || next.site !== existing.site;
    const update: Partial<FollowedRepositoryEntity> = { ...change, fullName: next.fullName };
    let due = false;
    if (moved || !sameGlobs(before.globs, after.globs)) {
      due = followsAnything(after.globs);
      Object.assign(update, {
        refsReadAt: null,
        refsEtags: null,
        nextPollAt: due ? now : null,
        goneAt: null,
      });
    }
    if (moved) {
      await tx.delete(FollowedRefEntity, { repositoryId: existing.id });
    }
    await tx.update(FollowedRepositoryEntity, { id: existing.id }, update);
    return due;
  }

  /** Rows with their workflow's uuid and owner, and their globs in force. */
  private async subjects(rows: readonly FollowedRepositoryEntity[]): Promise<FollowSubject[]> {
    if (rows.length === 0) {
      return [];
    }
    const workflows = await this.dataSource.getRepository<RegistryWorkflow>(REGISTRY_WORKFLOW).find({
      select: { id: true, uuid: true, ownerId: true },
      where: { id: In(rows.map((row) => row.workflowId)) },
    });
    const byId = new Map(workflows.map((workflow) => [workflow.id, workflow]));
    return rows.flatMap((repository) => {
      const workflow = byId.get(repository.workflowId);
      if (!workflow) {
        return [];
      }
      const { globs } = followInForce(
        followColumn.from(repository.apiFollow),
        followColumn.from(repository.fileFollow),
      );
      return [{ repository, workflowUuid: workflow.uuid, ownerId: workflow.ownerId, globs }];
    });
  }

  /** The workflow's name and latest version, as a failure's notification names them. */
  private async latestOf(tx: EntityManager, workflowId: number): Promise<{ name: string; version: string }> {
    const latest = await tx
      .createQueryBuilder<{ name: string; version: string }>(REGISTRY_VERSION, 'v')
      .innerJoin(REGISTRY_WORKFLOW, 'w', 'w.latest_version_id = v.id')
      .select(['v.name', 'v.version'])
      .where('w.id = :workflowId', { workflowId })
      .getOne();
    return { name: latest?.name ?? '', version: latest?.version ?? '' };
  }

  private token(owner: string): string {
    return `${owner}#${++this.claims}`.slice(-64);
  }
}
