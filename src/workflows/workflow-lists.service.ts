import { Injectable } from '@nestjs/common';
import { hasRole, type AuthUser } from '../auth/auth-user.js';
import type { Viewer } from '../auth/optional-auth.decorator.js';
import { CoalescedReads } from '../common/coalesced-reads.js';
import {
  toListedSummaryResponse,
  type WorkflowSummaryDto,
  type WorkflowSummaryView,
} from './dto/workflow-response.dto.js';
import type { ListedWorkflow } from './listed-workflows.reader.js';
import type { TestInstanceEntity, WorkflowEntity } from './entities/registry.entities.js';
import { VersionStatusReader } from './version-status.reader.js';
import type { ListWindow, WorkflowFilter, WorkflowSearch } from './workflow-list.reader.js';
import { NOT_AVAILABLE, NOT_AVAILABLE_LISTED, type LastCheck } from './workflow-status-source.js';
import { latestVersionOf, versionsOf } from './workflow-versions.js';
import { WorkflowsRepository } from './workflows.repository.js';

/** The longest list read whole that is answered at once (with an ETag); a longer one streams. */
export const LIST_BATCH = 1000;

/**
 * Workflows per batch of a streamed list: each batch is one keyset read and one status read.
 * Small so that what a batch holds (its rows, views and JSON) dies young: at 1,000 it outlived
 * the young generation's collections, V8 went on to allocate those objects in the old generation
 * (allocation-site pretenuring), and its garbage grew the RSS by 100-200 MiB over a
 * 100,000-workflow list (test/bench/scale.bench.mjs); at 250, by about 10 MiB.
 */
export const STREAM_BATCH = 250;

/** Which workflows `listOf` lists: one registry's, one owner's, or one owner's from one registry. */
export type WorkflowSelection = { registryId: number } | { ownerId: number; registryId?: number };

/** A version's status in a registry's list (`versions=true`). */
export type VersionStatusView = NonNullable<WorkflowSummaryView['status']>;

/** A page of a list: `limit` workflows from `offset`. */
export interface ListPage {
  limit: number;
  offset?: number;
}

/** A page read as a request asks for it. */
interface PageRead {
  filter: WorkflowFilter;
  page: ListPage;
  withStatus: boolean;
}

/** A page read for its replies: their links start with the request's base URL. */
interface ReplyPageRead extends PageRead {
  baseUrl: string;
}

/** A batch of a streamed list: its items, how many workflows it read, and the last one's place in the order. */
interface Batch<T> {
  items: T[];
  length: number;
  lastLatestVersionId: number | undefined;
}

function pageKey(read: PageRead): string {
  return JSON.stringify([
    read.filter.ownerId,
    read.filter.registryId,
    read.filter.public,
    read.page.limit,
    read.page.offset,
    read.withStatus,
  ]);
}

function replyPageKey(read: ReplyPageRead): string {
  return `${pageKey(read)} ${read.baseUrl}`;
}

function ownList(user: AuthUser): WorkflowFilter {
  return { ownerId: user.id };
}

/** Public and own (a registry's token: those from the registry); an admin's: all; an anonymous caller's: public only. */
export function visibleList(viewer: Viewer): WorkflowFilter {
  if (viewer?.registry !== undefined) {
    return { registryId: viewer.registry.id, public: true };
  }
  if (viewer && hasRole(viewer, 'admin')) {
    return {};
  }
  return viewer ? { ownerId: viewer.id, public: true } : { public: true };
}

/**
 * The registry's lists (API.md 2.2, 5.1, 10.1): pages and whole lists streamed batch by batch,
 * with their workflows' statuses, and searches. Its reasons to change are the lists' paging,
 * batching and polling (dashboards), not what one workflow shows.
 */
@Injectable()
export class WorkflowListsService {
  constructor(
    private readonly repo: WorkflowsRepository,
    private readonly statuses: VersionStatusReader,
  ) {}

  // Pages that dashboards poll: identical ones (same filter, page and status flag, whoever asks)
  // that arrive together share one read.
  private readonly pages = new CoalescedReads<PageRead, WorkflowSummaryView[]>(pageKey, async (read) =>
    this.summarize(await this.repo.listWorkflows(read.filter, read.page), read.withStatus),
  );

  // The same for pages answered straight from the list's narrow read (the items' replies).
  private readonly replyPages = new CoalescedReads<ReplyPageRead, WorkflowSummaryDto[]>(
    replyPageKey,
    async (read) =>
      this.replies(await this.repo.listedWorkflows(read.filter, read.page), read.withStatus, read.baseUrl),
  );

  /**
   * A page of the caller's own workflows as replies (with links after `baseUrl`), the one whose
   * latest version was registered last first.
   */
  list(user: AuthUser, page: ListPage, withStatus: boolean, baseUrl: string): Promise<WorkflowSummaryDto[]> {
    return this.replyPages.read({ filter: ownList(user), page, withStatus, baseUrl });
  }

  /**
   * The caller's whole list (from `offset`): one batch when it has at most LIST_BATCH workflows,
   * else STREAM_BATCH at a time, each batch read after the last one's place in the order:
   * memory and the cost of a batch stay the same however long the list is.
   */
  listBatches(
    user: AuthUser,
    offset: number | undefined,
    withStatus: boolean,
    baseUrl: string,
  ): AsyncGenerator<WorkflowSummaryDto[]> {
    return this.batches(ownList(user), offset, (window) =>
      this.replyBatch(ownList(user), window, withStatus, baseUrl),
    );
  }

  /**
   * A page of the workflows one registry sent (API.md 10.1), or of one owner's (a registry user's
   * local identity), ordered as `list`.
   */
  listOf(selection: WorkflowSelection, page: ListPage, withStatus: boolean): Promise<WorkflowSummaryView[]> {
    return this.pages.read({ filter: selection, page, withStatus });
  }

  /** `listOf` whole, batch by batch as `listBatches`. */
  batchesOf(
    selection: WorkflowSelection,
    offset: number | undefined,
    withStatus: boolean,
  ): AsyncGenerator<WorkflowSummaryView[]> {
    return this.batches(selection, offset, (window) => this.batch(selection, window, withStatus));
  }

  /**
   * The status summary of each version of these workflows (the registry list's `versions=true`),
   * by version id: one read for all.
   */
  async versionStatuses(workflows: readonly WorkflowEntity[]): Promise<Map<number, VersionStatusView>> {
    const versionIds = workflows.flatMap((workflow) => versionsOf(workflow).map((version) => version.id));
    const summaries = await this.statuses.summaries(versionIds);
    const instances = await this.instancesById(
      [...summaries.values()].flatMap((summary) =>
        summary.latestBuild ? [summary.latestBuild.instanceId] : [],
      ),
    );
    const lastChecks = await this.statuses.lastChecks([...instances.keys()]);
    const views = new Map<number, VersionStatusView>();
    for (const id of versionIds) {
      const summary = summaries.get(id) ?? NOT_AVAILABLE;
      const build = summary.latestBuild;
      const instance = build ? instances.get(build.instanceId) : undefined;
      views.set(id, {
        aggregate: summary.aggregate,
        latestBuild: build && instance ? { build, instance, lastChecks } : null,
      });
    }
    return views;
  }

  /**
   * A page of what `GET /workflows` shows the viewer (API.md 5.1): the public workflows, plus
   * their own with a token; an admin's: all. Ordered as `list`.
   */
  listVisible(viewer: Viewer, page: ListPage, withStatus: boolean): Promise<WorkflowSummaryView[]> {
    return this.pages.read({ filter: visibleList(viewer), page, withStatus });
  }

  /** `listVisible` as replies, with links after `baseUrl`. */
  visibleReplies(
    viewer: Viewer,
    page: ListPage,
    withStatus: boolean,
    baseUrl: string,
  ): Promise<WorkflowSummaryDto[]> {
    return this.replyPages.read({ filter: visibleList(viewer), page, withStatus, baseUrl });
  }

  /** `visibleReplies` whole, batch by batch as `listBatches`. */
  visibleBatches(
    viewer: Viewer,
    offset: number | undefined,
    withStatus: boolean,
    baseUrl: string,
  ): AsyncGenerator<WorkflowSummaryDto[]> {
    const filter = visibleList(viewer);
    return this.batches(filter, offset, (window) => this.replyBatch(filter, window, withStatus, baseUrl));
  }

  /**
   * A window of what `listVisible` shows that also meets `search` (its uuid, name, language or
   * owner), each workflow with its versions; `fromEnd` reads the list's last ones. No status.
   */
  search(viewer: Viewer, search: WorkflowSearch, window: ListWindow): Promise<WorkflowEntity[]> {
    return this.repo.searchWorkflows(visibleList(viewer), search, window);
  }

  /** The usernames of these workflows' owners, by owner id. */
  ownerNames(workflows: readonly WorkflowEntity[]): Promise<Map<number, string>> {
    return this.repo.usernames([...new Set(workflows.map((workflow) => workflow.ownerId))]);
  }

  private async *batches<T>(
    filter: WorkflowFilter,
    offset: number | undefined,
    read: (window: ListWindow) => Promise<Batch<T>>,
  ): AsyncGenerator<T[]> {
    // Its ids alone tell whether it fits in one reply; its rows are then read once, in one batch or in many.
    const short = (await this.repo.windowLength(filter, { limit: LIST_BATCH + 1, offset })) <= LIST_BATCH;
    let window: ListWindow = { limit: short ? LIST_BATCH : STREAM_BATCH, offset };
    let next = read(window);
    for (;;) {
      const batch = await next;
      const more = !short && batch.length === window.limit && batch.lastLatestVersionId;
      if (more) {
        // The next batch is read while this one is written: on MariaDB its round trips overlap
        // the serialising and sending. At most one batch ahead, so memory stays two batches'.
        window = { limit: STREAM_BATCH, before: more };
        next = read(window);
        // Read ahead for a reply the client may leave: its failure is nobody's then.
        next.catch(() => undefined);
      }
      yield batch.items;
      if (!more) {
        return;
      }
    }
  }

  private async batch(
    filter: WorkflowFilter,
    window: ListWindow,
    withStatus: boolean,
  ): Promise<Batch<WorkflowSummaryView>> {
    const workflows = await this.repo.listWorkflows(filter, window);
    return {
      items: await this.summarize(workflows, withStatus),
      length: workflows.length,
      lastLatestVersionId: workflows.at(-1)?.latestVersionId ?? undefined,
    };
  }

  private async replyBatch(
    filter: WorkflowFilter,
    window: ListWindow,
    withStatus: boolean,
    baseUrl: string,
  ): Promise<Batch<WorkflowSummaryDto>> {
    const workflows = await this.repo.listedWorkflows(filter, window);
    return {
      items: await this.replies(workflows, withStatus, baseUrl),
      length: workflows.length,
      lastLatestVersionId: workflows.at(-1)?.latestVersionId,
    };
  }

  /**
   * The items of a list's narrow read, mapped straight to their replies: with statuses, one read
   * of the latest versions' statuses (with their latest builds' last checks) and one of those
   * builds' instances, whatever the number of workflows.
   */
  private async replies(
    workflows: ListedWorkflow[],
    withStatus: boolean,
    baseUrl: string,
  ): Promise<WorkflowSummaryDto[]> {
    if (!withStatus) {
      return workflows.map((workflow) => toListedSummaryResponse({ workflow }, baseUrl));
    }
    const latestOf = (workflow: ListedWorkflow): number =>
      workflow.versions.at(-1)?.id ?? workflow.latestVersionId;
    const summaries = await this.statuses.listedSummaries(workflows.map(latestOf));
    const lastChecks = new Map<number, LastCheck>();
    const instanceIds = new Set<number>();
    for (const summary of summaries.values()) {
      if (summary.latestBuild) {
        instanceIds.add(summary.latestBuild.instanceId);
        if (summary.latestBuildCheck) {
          lastChecks.set(summary.latestBuild.instanceId, summary.latestBuildCheck);
        }
      }
    }
    const instances = await this.repo.listedInstances([...instanceIds]);
    return workflows.map((workflow) => {
      const summary = summaries.get(latestOf(workflow)) ?? NOT_AVAILABLE_LISTED;
      const build = summary.latestBuild;
      const instance = build ? instances.get(build.instanceId) : undefined;
      return toListedSummaryResponse(
        {
          workflow,
          status: {
            aggregate: summary.aggregate,
            // An instance deleted since the summary was read takes its build with it.
            latestBuild: build && instance ? { build, instance, lastChecks } : null,
          },
        },
        baseUrl,
      );
    });
  }

  private async summarize(workflows: WorkflowEntity[], withStatus: boolean): Promise<WorkflowSummaryView[]> {
    if (!withStatus) {
      return workflows.map((workflow) => ({ workflow }));
    }
    const summaries = await this.statuses.summaries(
      workflows.map((workflow) => latestVersionOf(workflow).id),
    );
    const instances = await this.instancesById(
      [...summaries.values()].flatMap((summary) =>
        summary.latestBuild ? [summary.latestBuild.instanceId] : [],
      ),
    );
    const lastChecks = await this.statuses.lastChecks([...instances.keys()]);
    return workflows.map((workflow) => {
      const summary = summaries.get(latestVersionOf(workflow).id) ?? NOT_AVAILABLE;
      const build = summary.latestBuild;
      const instance = build ? instances.get(build.instanceId) : undefined;
      return {
        workflow,
        status: {
          aggregate: summary.aggregate,
          // An instance deleted since the summary was read takes its build with it.
          latestBuild: build && instance ? { build, instance, lastChecks } : null,
        },
      };
    });
  }

  private async instancesById(ids: number[]): Promise<Map<number, TestInstanceEntity>> {
    return new Map(
      (await this.repo.findInstancesByIds([...new Set(ids)])).map((instance) => [instance.id, instance]),
    );
  }
}
