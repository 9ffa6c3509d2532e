import { Injectable } from '@nestjs/common';
import { DomainError } from '../../common/errors/domain-error.js';
import { isRecord } from '../../common/is-record.js';
import type { OutboundResponse } from '../../common/net/http-client.js';
import { AppConfig } from '../../config/app-config.js';
import { UpstreamUnavailable } from '../../crates/index.js';
import { OWNER_LENGTH, REPO_LENGTH } from '../follow/entities/followed-repository.entity.js';
import {
  refProblem,
  RegisterRepositoryHost,
  RepositoryGone,
  type RefKind,
  type RefsPage,
  type RepositoryArchive,
  type RepositoryHost,
  type RepositoryLink,
  type RepositoryRef,
  type RepositorySource,
} from './repository-host.js';
import { answerFailure, readJsonAnswer, sendToHost, upstreamRefusal, type HostWords } from './host-api.js';

/** gitlab.com, known without settings (API.md 18). */
export const GITLAB_COM = 'https://gitlab.com';
/** The `type` of GitLab's entries in TESTING_SERVICES_FILE: each is an instance whose projects are repositories. */
const SERVICE_TYPE = 'gitlab';
/** GitLab in failures. */
const GITLAB: HostWords = { host: 'GitLab', credential: "the instance's token" };
/** GitLab's listings serve at most 100 items a page. */
const REFS_PER_PAGE = 100;
/** A namespace or project path segment as GitLab allows it (letters, digits, `_`, `-`, `.`; not led by `-` or `.`). */
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
/** First path segments of a GitLab instance that are its own pages, never a namespace. */
const RESERVED = new Set([
  '-',
  'admin',
  'api',
  'dashboard',
  'explore',
  'groups',
  'help',
  'oauth',
  'profile',
  'projects',
  'search',
  'snippets',
  'uploads',
  'users',
]);

/** A GitLab instance whose projects are crate sources: its web base, credentials and trust. */
interface Instance {
  site: string;
  token?: string;
  /** Configured instances are trusted (as configured CI services are: API.md 2.8). */
  trusted: boolean;
}

/** `https://Host/base/` → `https://host/base`: the form sites are compared in. */
function siteOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
  } catch {
    return undefined;
  }
}

/**
 * GitLab projects as crate sources (API.md 18): a `roc_link` is a project on gitlab.com or on an
 * instance configured as a `gitlab` service in TESTING_SERVICES_FILE (whose token reads its API);
 * the repository is read through API v4 (`{url}/api/v4/projects/{url-encoded path}`), and its
 * archive is `…/repository/archive.zip?sha=`, downloaded with the token through the
 * registration's guarded download.
 */
@RegisterRepositoryHost()
@Injectable()
export class GitlabRepositories implements RepositoryHost {
  readonly name = 'gitlab';

  constructor(private readonly config: AppConfig) {}

  /**
   * The project a link names on a known instance: `{site}/{group}/…/{project}`, optionally
   * `.git` or `/-/tree/{ref}`; undefined for a link elsewhere and for the files an instance serves
   * (`/-/raw/…`, `/-/archive/…`, uploads: downloaded as any link). DomainError('invalid_input')
   * for a link on the instance that names no project (a user or group page, one of GitLab's own
   * pages), for `.`/`..` or an encoded slash in the path, and for a ref git would refuse.
   */
  parseLink(link: string): RepositoryLink | undefined {
    const instance = this.instanceOf(link);
    if (!instance) {
      return undefined;
    }
    // As given, not as URL parsing resolves it (`a/../b` is `b` to it): after the instance's base.
    const rest = link
      .replace(/^[^:]*:\/\/[^/?#]*/, '')
      .replace(/[?#].*$/, '')
      .slice(new URL(instance.site).pathname.replace(/\/+$/, '').length);
    if (/(^|\/)(\.|%2e){1,2}(\/|$)/i.test(rest)) {
      throw notProject(`has '.' or '..' in its path`);
    }
    if (/%2f|%5c|\\/i.test(rest)) {
      throw notProject('has an encoded slash or a backslash in its path');
    }
    let segments: string[];
    try {
      segments = rest
        .split('/')
        .filter((segment) => segment !== '')
        .map((segment) => decodeURIComponent(segment));
    } catch {
      throw notProject('has a path that is not valid percent-encoding');
    }
    const dash = segments.indexOf('-');
    const path = dash < 0 ? segments : segments.slice(0, dash);
    const page = dash < 0 ? [] : segments.slice(dash + 1);
    // Files GitLab serves (`/-/raw/…`, `/-/archive/…`, job artifacts, uploads) are ordinary links.
    if ((page.length > 0 && page[0] !== 'tree') || path.indexOf('uploads') >= 2) {
      return undefined;
    }
    if (path.length === 0) {
      throw notProject("is the instance's home page");
    }
    if (RESERVED.has(path[0].toLowerCase())) {
      throw notProject(`is one of GitLab's own pages (/${path[0]})`);
    }
    if (path.length === 1) {
      throw notProject(`is the page of the user or group '${path[0]}'`);
    }
    const repo = path[path.length - 1].replace(/\.git$/, '');
    const owner = path.slice(0, -1).join('/');
    if (![...path.slice(0, -1), repo].every((segment) => SEGMENT.test(segment))) {
      throw notProject(`does not name a valid group and project ('${path.join('/')}')`);
    }
    if (owner.length > OWNER_LENGTH || repo.length > REPO_LENGTH) {
      throw notProject(
        `names a group path longer than ${OWNER_LENGTH} or a project longer than ${REPO_LENGTH} characters`,
      );
    }
    const site = instance.site;
    if (page.length === 0) {
      return { site, owner, repo };
    }
    const ref = page.slice(1).join('/');
    const problem = ref === '' ? 'it is empty' : refProblem(ref);
    if (problem) {
      throw new DomainError(
        'invalid_input',
        `the ref in the GitLab link is not a valid ref name: ${problem}`,
      );
    }
    return { site, owner, repo, ref };
  }

  describe(link: RepositoryLink): string {
    return `the GitLab project ${link.owner}/${link.repo}`;
  }

  refLink(link: RepositoryLink, ref: string): string {
    return `${link.site}/${link.owner}/${link.repo}/-/tree/${ref.split('/').map(encodeURIComponent).join('/')}`;
  }

  apiUrl(link: RepositoryLink): string {
    return `${link.site}/api/v4`;
  }

  /**
   * The ref to register and its commit: the link's ref (`repository/commits/{ref}`), else a tag
   * or branch named like `version`, else the default branch. DomainError('invalid_input') for a
   * project GitLab does not show us or a ref it does not have; UpstreamUnavailable when it fails.
   */
  async resolve(link: RepositoryLink, version: string): Promise<RepositorySource> {
    const name = `${link.owner}/${link.repo}`;
    const project = await this.getJson(link, [], undefined);
    if (project === undefined) {
      throw new DomainError(
        'invalid_input',
        `${this.describe(link)} does not exist, or ${this.access(link)}`,
      );
    }
    if (link.ref !== undefined) {
      const commit = await this.commitOf(link, ['repository', 'commits', link.ref]);
      if (commit === undefined) {
        throw new DomainError(
          'invalid_input',
          `the GitLab project ${name} has no branch, tag or commit '${link.ref}'`,
        );
      }
      return { ref: link.ref, commit };
    }
    if (refProblem(version) === undefined) {
      for (const kind of ['tags', 'branches']) {
        const commit = await this.commitOf(link, ['repository', kind, version]);
        if (commit !== undefined) {
          return { ref: version, commit };
        }
      }
    }
    const defaultBranch = isRecord(project) ? project.default_branch : undefined;
    if (typeof defaultBranch !== 'string' || defaultBranch === '') {
      throw new DomainError(
        'invalid_input',
        `the GitLab project ${name} has no default branch (is it empty?)`,
      );
    }
    const commit = await this.commitOf(link, ['repository', 'branches', defaultBranch]);
    if (commit === undefined) {
      throw new DomainError(
        'invalid_input',
        `the GitLab project ${name} has no commit on its default branch`,
      );
    }
    return { ref: defaultBranch, commit };
  }

  /**
   * GitLab serves the archive from its API: downloaded from there, with the instance's token, and
   * trusted as the API is when the instance is configured.
   */
  archive(link: RepositoryLink, commit: string): Promise<RepositoryArchive> {
    const url = `${this.endpoint(link, ['repository', 'archive.zip'])}?sha=${encodeURIComponent(commit)}`;
    return Promise.resolve({
      url,
      authorization: this.authorization(link),
      trusted: this.instanceOf(link)?.trusted === true,
    });
  }

  /**
   * A page (from 1) of the project's branches or tags (`repository/branches`, `repository/tags`),
   * conditional on the page's last ETag. The last page is the one without `X-Next-Page` (or a
   * `Link` rel="next"), else a short one. RepositoryGone on a 404.
   */
  async refsPage(link: RepositoryLink, kind: RefKind, page: number, etag?: string): Promise<RefsPage> {
    const what = kind === 'heads' ? 'branches' : 'tags';
    const url = `${this.endpoint(link, ['repository', what])}?per_page=${REFS_PER_PAGE}&page=${page}`;
    const response = await this.send(link, url, etag === undefined ? {} : { 'if-none-match': etag });
    if (response.status === 304) {
      response.body.resume();
      return { kind: 'unchanged' };
    }
    if (response.status === 404) {
      response.body.resume();
      throw new RepositoryGone(`${this.describe(link)} does not exist, or ${this.access(link)}`);
    }
    const body = await readJsonAnswer(
      GITLAB,
      response,
      `the ${what} of ${link.owner}/${link.repo}`,
      this.config.registry.downloadTimeoutMs,
    );
    if (!Array.isArray(body)) {
      throw new UpstreamUnavailable(
        `GitLab answered the ${what} of ${link.owner}/${link.repo} with something that is not a list`,
      );
    }
    const refs = body.flatMap((item: unknown): RepositoryRef[] => {
      const name = isRecord(item) ? item.name : undefined;
      const commit = isRecord(item) && isRecord(item.commit) ? item.commit.id : undefined;
      return typeof name === 'string' && typeof commit === 'string' ? [{ name, commit }] : [];
    });
    const next = response.headers['x-next-page'];
    const links = response.headers.link;
    const last =
      typeof next === 'string'
        ? next.trim() === ''
        : typeof links === 'string'
          ? !/rel="next"/.test(links)
          : body.length < REFS_PER_PAGE;
    const etagOut = typeof response.headers.etag === 'string' ? response.headers.etag : undefined;
    return { kind: 'refs', refs, etag: etagOut, last };
  }

  /** The commit a tag names now (`repository/tags/{tag}`), or undefined when the tag is gone. */
  tagCommit(link: RepositoryLink, tag: string): Promise<string | undefined> {
    return this.commitOf(link, ['repository', 'tags', tag]);
  }

  /** Configured instances (TESTING_SERVICES_FILE's `gitlab` entries), then gitlab.com when none configures it. */
  private instances(): Instance[] {
    const configured = this.config.monitoring.services.flatMap((service): Instance[] => {
      const site = service.type === SERVICE_TYPE ? siteOf(service.url) : undefined;
      return site === undefined ? [] : [{ site, token: service.token, trusted: true }];
    });
    return configured.some((instance) => instance.site === GITLAB_COM)
      ? configured
      : [...configured, { site: GITLAB_COM, trusted: false }];
  }

  /** The instance a link is on (the longest base that holds it), or undefined. */
  private instanceOf(link: string | RepositoryLink): Instance | undefined {
    const page = typeof link === 'string' ? siteOf(link) : link.site;
    if (page === undefined) {
      return undefined;
    }
    return this.instances()
      .filter((instance) =>
        typeof link === 'string' ? `${page}/`.startsWith(`${instance.site}/`) : page === instance.site,
      )
      .sort((a, b) => b.site.length - a.site.length)[0];
  }

  /** The commit a ref endpoint answers (`{id}` of a commit, `commit.id` of a branch or tag); undefined on a 404. */
  private async commitOf(link: RepositoryLink, segments: string[]): Promise<string | undefined> {
    const body = await this.getJson(link, segments, undefined);
    if (body === undefined) {
      return undefined;
    }
    const sha = isRecord(body) ? (isRecord(body.commit) ? body.commit.id : body.id) : undefined;
    if (typeof sha !== 'string' || !/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(sha)) {
      throw upstreamRefusal('GitLab answered a commit without a valid id');
    }
    return sha;
  }

  /** A JSON answer of the project's API, or undefined on a 404. */
  private async getJson(
    link: RepositoryLink,
    segments: string[],
    what: string | undefined,
  ): Promise<unknown> {
    const response = await this.send(link, this.endpoint(link, segments));
    if (response.status === 404) {
      response.body.resume();
      return undefined;
    }
    return readJsonAnswer(
      GITLAB,
      response,
      what ?? (segments.join('/') || `the project ${link.owner}/${link.repo}`),
      this.config.registry.downloadTimeoutMs,
    );
  }

  private async send(
    link: RepositoryLink,
    url: string,
    headers: Record<string, string> = {},
  ): Promise<OutboundResponse> {
    const authorization = this.authorization(link);
    return sendToHost(GITLAB, url, {
      headers: { accept: 'application/json', ...headers },
      originOnlyHeaders: authorization ? { authorization } : undefined,
      timeoutMs: this.config.registry.downloadTimeoutMs,
      allowPrivate: this.config.registry.allowPrivateNetworkLinks,
      trustedOrigins: this.instanceOf(link)?.trusted === true ? [new URL(link.site).origin] : undefined,
    });
  }

  private failure(response: OutboundResponse, what: string): DomainError {
    return answerFailure(GITLAB, response, what);
  }

  /** What would give access to a private project: the instance's token. */
  private access(link: RepositoryLink): string {
    return this.instanceOf(link)?.token
      ? "is private and the instance's token does not give access to it"
      : `is private (a token for ${link.site} in TESTING_SERVICES_FILE gives access)`;
  }

  private authorization(link: RepositoryLink): string | undefined {
    const token = this.instanceOf(link)?.token;
    return token ? `Bearer ${token}` : undefined;
  }

  /** `{site}/api/v4/projects/{url-encoded path}/…`, every segment encoded (a ref's slashes too). */
  private endpoint(link: RepositoryLink, segments: readonly string[]): string {
    const project = encodeURIComponent(`${link.owner}/${link.repo}`);
    return [`${this.apiUrl(link)}/projects/${project}`, ...segments.map(encodeURIComponent)].join('/');
  }
}

function notProject(what: string): DomainError {
  return new DomainError(
    'invalid_input',
    `the GitLab link ${what}: link a project as {instance}/{group}/{project}, optionally with /-/tree/{ref}`,
  );
}
