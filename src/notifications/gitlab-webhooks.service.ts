import { createHash, timingSafeEqual } from 'node:crypto';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { DomainError } from '../common/errors/domain-error.js';
import { isRecord } from '../common/is-record.js';
import { AppConfig } from '../config/app-config.js';
import { FollowedRepositoriesService, type RepositoryRefEvent } from '../repositories/index.js';
import { normalizeServiceUrl, parseGitlabResource, Rechecks } from '../test-monitoring/index.js';
import { RegistryEvents } from '../workflows/index.js';
import {
  GitlabProjectInstanceEntity,
  PROJECT_KEY_LENGTH,
} from './entities/gitlab-project-instance.entity.js';
import { WatchedInstances } from './watched-instances.js';

/** What a delivery of GitLab's did here. */
export type GitlabWebhookOutcome = 'rechecked' | 'queued' | 'ignored';

/** The service type of GitLab CI's instances. */
const SERVICE_TYPE = 'gitlab';
/** A tag's or branch's commit before it existed, or after it was deleted. */
const NO_COMMIT = /^0{40}$/;

/**
 * The keys a GitLab CI instance is found by: `{instance url}/{path}` or `{instance url}#{id}`, lower
 * case; undefined for a resource that names no project, or a key too long to index.
 */
export function projectKeyOf(serviceUrl: string, resource: string): string | undefined {
  const named = parseGitlabResource(resource);
  if (!named) {
    return undefined;
  }
  const base = normalizeServiceUrl(serviceUrl);
  const key = (
    /^\d+$/.test(named.project) ? `${base}#${named.project}` : `${base}/${named.project}`
  ).toLowerCase();
  return key.length <= PROJECT_KEY_LENGTH ? key : undefined;
}

/**
 * GitLab webhooks in (API.md 18): `X-Gitlab-Token` is compared with GITLAB_WEBHOOK_SECRET in
 * constant time (401 when it differs or the setting is unset, and nothing changes); a `Pipeline
 * Hook` makes every instance watching that project due at once; a `Tag Push Hook`, `Push Hook` or
 * `Release Hook` is handed to the followed repositories (API.md 12), as GitHub's ref events are.
 * Polling stays the fallback of both.
 */
@Injectable()
export class GitlabWebhooksService implements OnModuleInit {
  private readonly logger = new Logger(GitlabWebhooksService.name);

  /** The GitLab CI instances by project key. */
  private readonly watched: WatchedInstances<GitlabProjectInstanceEntity>;

  constructor(
    private readonly config: AppConfig,
    @InjectRepository(GitlabProjectInstanceEntity)
    rows: Repository<GitlabProjectInstanceEntity>,
    private readonly registry: RegistryEvents,
    private readonly rechecks: Rechecks,
    private readonly repositories: FollowedRepositoriesService,
  ) {
    this.watched = new WatchedInstances(rows, 'projectKey', (instance) =>
      instance.serviceType === SERVICE_TYPE
        ? projectKeyOf(instance.serviceUrl, instance.resource)
        : undefined,
    );
  }

  /** The instances that watch one of the project keys. */
  instancesWatching(keys: readonly string[]): Promise<number[]> {
    return this.watched.watching(keys);
  }

  /** Keys the GitLab instances of each registration, and an instance given a new resource, in its transaction. */
  onModuleInit(): void {
    this.watched.keepWith(this.registry);
  }

  async receive(
    event: string | undefined,
    token: string | undefined,
    body: Buffer | undefined,
  ): Promise<GitlabWebhookOutcome> {
    const secret = this.config.notifications.gitlabWebhookSecret;
    if (!secret) {
      throw new DomainError(
        'unauthorized',
        'GitLab webhooks are not accepted: GITLAB_WEBHOOK_SECRET is not set',
      );
    }
    if (token === undefined || !sameSecret(secret, token)) {
      throw new DomainError('unauthorized', 'X-Gitlab-Token is missing or wrong');
    }
    const payload = payloadOf(body);
    const project = projectOf(payload);
    switch (event ?? '') {
      case 'Pipeline Hook': {
        if (!project) {
          throw new DomainError(
            'invalid_input',
            'a Pipeline Hook needs project.web_url and project.path_with_namespace',
          );
        }
        const keys = [`${project.site}/${project.path}`.toLowerCase()];
        if (project.id !== undefined) {
          keys.push(`${project.site}#${project.id}`.toLowerCase());
        }
        const ids = await this.instancesWatching(keys);
        this.logger.log(`pipeline of ${project.path}: rechecking ${ids.length} instances`);
        await this.rechecks.now(ids);
        return 'rechecked';
      }
      case 'Tag Push Hook':
      case 'Push Hook':
      case 'Release Hook': {
        const ref = project ? refEventOf(event ?? '', payload, project) : undefined;
        return ref ? this.repositories.receive(ref) : 'ignored';
      }
      default:
        return 'ignored';
    }
  }
}

/** Compares digests, so that neither the comparison's time nor its refusal of other lengths tells the secret. */
function sameSecret(secret: string, token: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(secret), digest(token));
}

function payloadOf(body: Buffer | undefined): unknown {
  try {
    return JSON.parse(body?.toString('utf8') ?? '');
  } catch {
    throw new DomainError('invalid_input', 'the webhook body is not JSON');
  }
}

/** The event's project: the instance's URL (its `web_url` less its path), its path and id. */
interface HookProject {
  site: string;
  path: string;
  id?: number;
}

function projectOf(payload: unknown): HookProject | undefined {
  const project = isRecord(payload) && isRecord(payload.project) ? payload.project : undefined;
  const web = typeof project?.web_url === 'string' ? project.web_url.replace(/\/+$/, '') : undefined;
  const path = typeof project?.path_with_namespace === 'string' ? project.path_with_namespace : undefined;
  if (!web || !path || !web.toLowerCase().endsWith(`/${path.toLowerCase()}`)) {
    return undefined;
  }
  const site = normalizeServiceUrl(web.slice(0, web.length - path.length - 1));
  return { site, path, id: typeof project?.id === 'number' ? project.id : undefined };
}

/**
 * The ref a GitLab event tells of (its documented payloads): a tag created (`Tag Push Hook` from no
 * commit, `Release Hook` `create`), or a branch pushed to a commit (`Push Hook` to `refs/heads/…`,
 * not a deletion); undefined for anything else (a tag deleted, a release updated).
 */
function refEventOf(event: string, payload: unknown, project: HookProject): RepositoryRefEvent | undefined {
  if (!isRecord(payload)) {
    return undefined;
  }
  const where = { site: project.site, repository: project.path };
  const ref = typeof payload.ref === 'string' ? payload.ref : '';
  const before = typeof payload.before === 'string' ? payload.before : '';
  const after = typeof payload.after === 'string' ? payload.after : '';
  switch (event) {
    case 'Release Hook':
      return payload.action === 'create' && typeof payload.tag === 'string' && payload.tag !== ''
        ? { ...where, kind: 'tag', name: payload.tag }
        : undefined;
    case 'Tag Push Hook':
      return ref.startsWith('refs/tags/') && NO_COMMIT.test(before) && !NO_COMMIT.test(after)
        ? { ...where, kind: 'tag', name: ref.slice('refs/tags/'.length) }
        : undefined;
    default:
      return ref.startsWith('refs/heads/') && /^[0-9a-f]{40}$/.test(after) && !NO_COMMIT.test(after)
        ? { ...where, kind: 'branch', name: ref.slice('refs/heads/'.length), commit: after }
        : undefined;
  }
}
