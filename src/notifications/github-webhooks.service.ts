import { createHmac, timingSafeEqual } from 'node:crypto';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { DomainError } from '../common/errors/domain-error.js';
import { isRecord } from '../common/is-record.js';
import { AppConfig } from '../config/app-config.js';
import { Rechecks } from '../test-monitoring/index.js';
import { FollowedRepositoriesService, GITHUB_SITE, type RepositoryRefEvent } from '../repositories/index.js';
import { RegistryEvents } from '../workflows/index.js';
import { GithubWorkflowInstanceEntity, workflowKeyOf } from './entities/github-workflow-instance.entity.js';
import { WatchedInstances } from './watched-instances.js';

/** What a delivery of GitHub's did here. */
export type WebhookOutcome = 'pong' | 'rechecked' | 'queued' | 'ignored';

/** The events that tell of a followed repository's new tag or push (API.md 12). */
const REF_EVENTS = new Set(['create', 'release', 'push']);

/**
 * GitHub webhooks in (API.md 6.5): the signature is checked over the raw body with
 * GITHUB_WEBHOOK_SECRET in constant time; a `workflow_run` makes every instance whose GitHub
 * resource names that repository and workflow due at once; a `create` (tag), `release`
 * (`published`) or `push` is handed to the registry's followed repositories (API.md 12), which
 * queue the versions to register. Polling stays the fallback of both.
 */
@Injectable()
export class GithubWebhooksService implements OnModuleInit {
  private readonly logger = new Logger(GithubWebhooksService.name);

  /** The GitHub Actions instances by `owner/repo/workflow`. */
  private readonly watched: WatchedInstances<GithubWorkflowInstanceEntity>;

  constructor(
    private readonly config: AppConfig,
    @InjectRepository(GithubWorkflowInstanceEntity)
    rows: Repository<GithubWorkflowInstanceEntity>,
    private readonly registry: RegistryEvents,
    private readonly rechecks: Rechecks,
    private readonly repositories: FollowedRepositoriesService,
  ) {
    this.watched = new WatchedInstances(rows, 'workflowKey', (instance) =>
      instance.serviceType === 'github' ? workflowKeyOf(instance.resource) : undefined,
    );
  }

  /** The instances that watch one of the `owner/repo/workflow` keys. */
  instancesWatching(keys: readonly string[]): Promise<number[]> {
    return this.watched.watching(keys);
  }

  /** Keys the GitHub instances of each registration, and an instance given a new resource, in its transaction. */
  onModuleInit(): void {
    this.watched.keepWith(this.registry);
  }

  async receive(
    event: string | undefined,
    signature: string | undefined,
    body: Buffer | undefined,
  ): Promise<WebhookOutcome> {
    const secret = this.config.notifications.githubWebhookSecret;
    if (!secret) {
      throw new DomainError(
        'unauthorized',
        'GitHub webhooks are not accepted: GITHUB_WEBHOOK_SECRET is not set',
      );
    }
    if (!body || !signatureMatches(secret, signature, body)) {
      throw new DomainError('unauthorized', 'X-Hub-Signature-256 is missing or does not match the body');
    }
    if (event === 'ping') {
      return 'pong';
    }
    if (event !== undefined && REF_EVENTS.has(event)) {
      const ref = repositoryRefOf(event, payloadOf(body));
      return ref ? this.repositories.receive(ref) : 'ignored';
    }
    if (event !== 'workflow_run') {
      return 'ignored';
    }
    const keys = workflowKeysOf(payloadOf(body));
    const ids = await this.instancesWatching(keys);
    this.logger.log(`workflow_run of ${keys[0] ?? '?'}: rechecking ${ids.length} instances`);
    await this.rechecks.now(ids);
    return 'rechecked';
  }
}

/** Constant-time comparison of `sha256=<hex>` with the HMAC of the body. */
export function signatureMatches(secret: string, header: string | undefined, body: Buffer): boolean {
  if (header === undefined || !/^sha256=[0-9a-fA-F]{64}$/.test(header)) {
    return false;
  }
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(header.slice('sha256='.length), 'hex'));
}

/** The JSON payload, sent as `application/json` or as the `payload` field of a form. */
function payloadOf(body: Buffer): unknown {
  let text = body.toString('utf8');
  if (text.startsWith('payload=')) {
    text = new URLSearchParams(text).get('payload') ?? '';
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new DomainError('invalid_input', 'the webhook body is not JSON');
  }
}

/** The keys a crate may name the run's workflow by: `owner/repo/` then its file name or its numeric id. */
function workflowKeysOf(payload: unknown): string[] {
  const run = isRecord(payload) && isRecord(payload.workflow_run) ? payload.workflow_run : undefined;
  const repository = isRecord(payload) && isRecord(payload.repository) ? payload.repository : undefined;
  const fullName = typeof repository?.full_name === 'string' ? repository.full_name : undefined;
  if (!run || !fullName || !/^[^/]+\/[^/]+$/.test(fullName)) {
    throw new DomainError(
      'invalid_input',
      'a workflow_run event needs workflow_run and repository.full_name',
    );
  }
  const base = `${fullName}/`.toLowerCase();
  const names: string[] = [];
  if (typeof run.path === 'string' && run.path !== '') {
    names.push(run.path.split('/').pop() ?? run.path);
  }
  if (typeof run.workflow_id === 'number' || typeof run.workflow_id === 'string') {
    names.push(String(run.workflow_id));
  }
  if (names.length === 0) {
    throw new DomainError(
      'invalid_input',
      'a workflow_run event needs workflow_run.path or workflow_run.workflow_id',
    );
  }
  return names.map((name) => base + name.toLowerCase());
}

/**
 * The ref a `create`, `release` or `push` payload tells of (GitHub's documented payloads): a tag
 * created (`create` of `ref_type` tag, `release` `published`, a `push` creating `refs/tags/…`),
 * or a branch pushed to a commit (`push` to `refs/heads/…`, not a deletion); undefined for
 * anything else (a branch created, a release edited, a tag moved or deleted, no repository).
 */
function repositoryRefOf(event: string, payload: unknown): RepositoryRefEvent | undefined {
  const repository = isRecord(payload) && isRecord(payload.repository) ? payload.repository : undefined;
  const fullName = typeof repository?.full_name === 'string' ? repository.full_name : undefined;
  if (!isRecord(payload) || !fullName || !/^[^/]+\/[^/]+$/.test(fullName)) {
    return undefined;
  }
  const tag = (name: unknown): RepositoryRefEvent | undefined =>
    typeof name === 'string' && name !== ''
      ? { site: GITHUB_SITE, repository: fullName, kind: 'tag', name }
      : undefined;
  switch (event) {
    case 'create':
      return payload.ref_type === 'tag' ? tag(payload.ref) : undefined;
    case 'release':
      return payload.action === 'published' && isRecord(payload.release)
        ? tag(payload.release.tag_name)
        : undefined;
    default: {
      const ref = typeof payload.ref === 'string' ? payload.ref : '';
      if (payload.deleted === true) {
        return undefined;
      }
      if (ref.startsWith('refs/tags/')) {
        return payload.created === true ? tag(ref.slice('refs/tags/'.length)) : undefined;
      }
      const commit = payload.after;
      if (ref.startsWith('refs/heads/') && typeof commit === 'string' && /^[0-9a-f]{40}$/.test(commit)) {
        return {
          site: GITHUB_SITE,
          repository: fullName,
          kind: 'branch',
          name: ref.slice('refs/heads/'.length),
          commit,
        };
      }
      return undefined;
    }
  }
}
