import { Injectable } from '@nestjs/common';
import { DomainError } from '../../common/errors/domain-error.js';
import { isRecord } from '../../common/is-record.js';
import type { OutboundResponse } from '../../common/net/http-client.js';
import { AppConfig } from '../../config/app-config.js';
import { UpstreamUnavailable } from '../../crates/index.js';
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

/** GitHub's repository pages: the `site` of every GitHub repository link. */
export const GITHUB_SITE = 'https://github.com';
const SITE = GITHUB_SITE;

/** GitHub's listings serve at most 100 items a page. */
export const REFS_PER_PAGE = 100;

const WEB_HOSTS = /^(www\.)?github\.com$/i;
const GIST_HOST = /^gist\.github\.com$/i;
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const REPO = /^[A-Za-z0-9._-]{1,100}$/;
/** First path segments of github.com that are GitHub's own pages, never an owner. */
const RESERVED = new Set([
  'about',
  'apps',
  'codespaces',
  'collections',
  'contact',
  'dashboard',
  'enterprise',
  'events',
  'explore',
  'features',
  'issues',
  'join',
  'login',
  'logout',
  'marketplace',
  'new',
  'notifications',
  'orgs',
  'organizations',
  'pricing',
  'pulls',
  'search',
  'security',
  'settings',
  'site',
  'sponsors',
  'stars',
  'topics',
  'trending',
  'users',
]);
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** GitHub in failures; its 403 or 429 without a rate limit's headers is a limit or a token's reach. */
const GITHUB: HostWords = {
  host: 'GitHub',
  credential: 'GITHUB_TOKEN',
  refusal: (status, what) =>
    `GitHub refused to answer (${status}; a rate limit, or GITHUB_TOKEN may not read ${what})`,
};

/**
 * Reads a `roc_link` on github.com: undefined for any other host (an ordinary link), the
 * repository for a repository page, and a DomainError('invalid_input') for the pages of GitHub
 * that hold no crate (a user page, an issue, a file, a gist) and for an unusable ref.
 */
export function parseRepositoryLink(link: string): RepositoryLink | undefined {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return undefined;
  }
  if (GIST_HOST.test(url.hostname)) {
    throw notRepository('is a gist, not a repository');
  }
  if (!WEB_HOSTS.test(url.hostname)) {
    return undefined;
  }
  // URL parsing resolves `..` segments away (`/tree/main/../../x` becomes `/x`): look at the link as given.
  const path = link.replace(/^[^:]*:\/\/[^/]*/, '').replace(/[?#].*$/, '');
  if (/(^|\/)(\.|%2e){2}(\/|$)/i.test(path)) {
    if (/\/tree\//.test(path)) {
      throw new DomainError(
        'invalid_input',
        "the ref in the GitHub link is not a valid ref name: it contains '..'",
      );
    }
    throw notRepository("has '..' in its path");
  }
  let segments: string[];
  try {
    segments = url.pathname
      .split('/')
      .filter((segment) => segment !== '')
      .map((segment) => decodeURIComponent(segment));
  } catch {
    throw notRepository('has a path that is not valid percent-encoding');
  }
  if (segments.length === 0) {
    throw notRepository("is GitHub's home page");
  }
  if (RESERVED.has(segments[0].toLowerCase())) {
    throw notRepository(`is one of GitHub's own pages (/${segments[0]})`);
  }
  if (segments.length === 1) {
    throw notRepository(`is the page of the user or organisation '${segments[0]}'`);
  }
  const [owner, rawRepo, kind, ...rest] = segments;
  const repo = rawRepo.replace(/\.git$/, '');
  if (!OWNER.test(owner) || !REPO.test(repo) || repo === '.' || repo === '..') {
    throw notRepository(`does not name a valid owner and repository ('${owner}/${rawRepo}')`);
  }
  if (kind === undefined) {
    return { site: SITE, owner, repo };
  }
  if (kind === 'tree' && rest.length > 0) {
    const ref = rest.join('/');
    const problem = refProblem(ref);
    if (problem) {
      throw new DomainError(
        'invalid_input',
        `the ref in the GitHub link is not a valid ref name: ${problem}`,
      );
    }
    return { site: SITE, owner, repo, ref };
  }
  const what =
    kind === 'issues' || kind === 'pull' || kind === 'pulls'
      ? 'an issue or pull request page'
      : `a page of the repository (/${kind}), not the repository itself`;
  throw notRepository(`is ${what}`);
}

function notRepository(what: string): DomainError {
  return new DomainError(
    'invalid_input',
    `the GitHub link ${what}: link a repository as https://github.com/{owner}/{repo}, optionally with /tree/{ref}`,
  );
}

/**
 * GitHub's API (GITHUB_API_URL, with GITHUB_TOKEN when set) for repository links: which commit a
 * ref names, and where its archive is. The API is the operator's setting and so trusted (like a
 * configured testing service); the archive host it redirects to is not, and goes through the
 * registration's download with its guard and limits.
 */
@RegisterRepositoryHost()
@Injectable()
export class GithubRepositories implements RepositoryHost {
  readonly name = 'github';

  constructor(private readonly config: AppConfig) {}

  /** See parseRepositoryLink. */
  parseLink(link: string): RepositoryLink | undefined {
    return parseRepositoryLink(link);
  }

  describe(link: RepositoryLink): string {
    return `the GitHub repository ${link.owner}/${link.repo}`;
  }

  refLink(link: RepositoryLink, ref: string): string {
    return `${SITE}/${link.owner}/${link.repo}/tree/${encodeURIComponent(ref)}`;
  }

  apiUrl(): string {
    return this.config.registry.github.apiUrl;
  }

  /**
   * The ref to register and its commit: the link's ref, else a tag or branch named like
   * `version`, else the default branch. Throws DomainError('invalid_input') for a repository
   * GitHub does not show us, a ref it does not have, and GitHub's own failures.
   */
  async resolve(link: RepositoryLink, version: string): Promise<RepositorySource> {
    const name = `${link.owner}/${link.repo}`;
    const repository = await this.getJson(
      ['repos', link.owner, link.repo],
      `the GitHub repository ${name} does not exist, or is private and GITHUB_TOKEN does not give access to it`,
    );
    if (link.ref !== undefined) {
      const commit = await this.commitOf(link, link.ref);
      if (commit === undefined) {
        throw new DomainError(
          'invalid_input',
          `the GitHub repository ${name} has no branch, tag or commit '${link.ref}'`,
        );
      }
      return { ref: link.ref, commit };
    }
    if (refProblem(version) === undefined) {
      for (const kind of ['tags', 'heads']) {
        const commit = await this.commitOf(link, `${kind}/${version}`);
        if (commit !== undefined) {
          return { ref: version, commit };
        }
      }
    }
    const defaultBranch = isRecord(repository) ? repository.default_branch : undefined;
    if (typeof defaultBranch !== 'string' || defaultBranch === '') {
      throw new DomainError(
        'invalid_input',
        `the GitHub repository ${name} has no default branch (is it empty?)`,
      );
    }
    const commit = await this.commitOf(link, `heads/${defaultBranch}`);
    if (commit === undefined) {
      throw new DomainError(
        'invalid_input',
        `the GitHub repository ${name} has no commit on its default branch`,
      );
    }
    return { ref: defaultBranch, commit };
  }

  /**
   * Where the zip archive of `commit` is: GitHub answers its zipball endpoint with a redirect to
   * a short-lived URL on its archive host (which carries its own access, so no token goes there);
   * an API that serves the archive itself is downloaded from with the token, trusted as its
   * other calls are.
   */
  async archive(link: RepositoryLink, commit: string): Promise<RepositoryArchive> {
    const url = this.endpoint(['repos', link.owner, link.repo, 'zipball', commit]);
    const response = await this.send(url);
    response.body.resume();
    const location = response.headers.location;
    if (REDIRECTS.has(response.status) && typeof location === 'string') {
      try {
        return { url: new URL(location, url).toString() };
      } catch {
        throw upstreamRefusal(`GitHub redirected the archive to an invalid location`);
      }
    }
    if (response.status >= 200 && response.status < 300) {
      return { url, authorization: this.authorization(), trusted: true };
    }
    throw this.failure(response, `the archive of ${link.owner}/${link.repo} at ${commit}`);
  }

  /**
   * A page (from 1) of the repository's branches or tags with their commits (GitHub's `GET
   * /repos/{owner}/{repo}/branches` and `…/tags`), asked with the page's last ETag: `unchanged`
   * when GitHub answers 304, which costs nothing of the rate limit. Throws RepositoryGone on a
   * 404, UpstreamUnavailable when GitHub fails or limits the rate (with the limit's end).
   */
  async refsPage(link: RepositoryLink, kind: RefKind, page: number, etag?: string): Promise<RefsPage> {
    const path = ['repos', link.owner, link.repo, kind === 'heads' ? 'branches' : 'tags'];
    const url = `${this.endpoint(path)}?per_page=${REFS_PER_PAGE}&page=${page}`;
    const response = await this.send(url, etag === undefined ? {} : { 'if-none-match': etag });
    if (response.status === 304) {
      response.body.resume();
      return { kind: 'unchanged' };
    }
    if (response.status === 404) {
      response.body.resume();
      throw new RepositoryGone(
        `the GitHub repository ${link.owner}/${link.repo} does not exist, or is private and GITHUB_TOKEN does not give access to it`,
      );
    }
    const body = await readJsonAnswer(
      GITHUB,
      response,
      `the ${kind === 'heads' ? 'branches' : 'tags'} of ${link.owner}/${link.repo}`,
      this.config.registry.downloadTimeoutMs,
    );
    if (!Array.isArray(body)) {
      throw new UpstreamUnavailable(
        `GitHub answered the ${kind === 'heads' ? 'branches' : 'tags'} of ${link.owner}/${link.repo} with something that is not a list`,
      );
    }
    const refs = body.flatMap((item: unknown): RepositoryRef[] => {
      const name = isRecord(item) ? item.name : undefined;
      const commit = isRecord(item) && isRecord(item.commit) ? item.commit.sha : undefined;
      return typeof name === 'string' && typeof commit === 'string' ? [{ name, commit }] : [];
    });
    const pages = response.headers.link;
    const etagOut = typeof response.headers.etag === 'string' ? response.headers.etag : undefined;
    return {
      kind: 'refs',
      refs,
      etag: etagOut,
      // GitHub's Link header names the next page; without one, a short page is the last.
      last: typeof pages === 'string' ? !/rel="next"/.test(pages) : body.length < REFS_PER_PAGE,
    };
  }

  /** The commit a tag names now (an annotated tag's target), or undefined when the tag is gone. */
  tagCommit(link: RepositoryLink, tag: string): Promise<string | undefined> {
    return this.commitOf(link, `tags/${tag}`);
  }

  /** The commit `ref` names (`tags/x`, `heads/x`, a branch, tag or SHA), or undefined when none. */
  private async commitOf(link: RepositoryLink, ref: string): Promise<string | undefined> {
    const url = this.endpoint(['repos', link.owner, link.repo, 'commits', ...ref.split('/')]);
    const response = await this.send(url);
    // GitHub answers 422 "No commit found for SHA: …" for a ref it does not know, 404 for some forms.
    if (response.status === 404 || response.status === 422) {
      response.body.resume();
      return undefined;
    }
    const body = await readJsonAnswer(
      GITHUB,
      response,
      `the commit of '${ref}'`,
      this.config.registry.downloadTimeoutMs,
    );
    const sha = isRecord(body) ? body.sha : undefined;
    if (typeof sha !== 'string' || !/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(sha)) {
      throw upstreamRefusal('GitHub answered a commit without a valid sha');
    }
    return sha;
  }

  private async getJson(segments: string[], notFound: string): Promise<unknown> {
    const response = await this.send(this.endpoint(segments));
    if (response.status === 404) {
      response.body.resume();
      throw new DomainError('invalid_input', notFound);
    }
    return readJsonAnswer(GITHUB, response, segments.join('/'), this.config.registry.downloadTimeoutMs);
  }

  private async send(url: string, headers: Record<string, string> = {}): Promise<OutboundResponse> {
    const authorization = this.authorization();
    return sendToHost(GITHUB, url, {
      headers: { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', ...headers },
      originOnlyHeaders: authorization ? { authorization } : undefined,
      timeoutMs: this.config.registry.downloadTimeoutMs,
      allowPrivate: true,
    });
  }

  private failure(response: OutboundResponse, what: string): DomainError {
    return answerFailure(GITHUB, response, what);
  }

  private authorization(): string | undefined {
    const token = this.config.registry.github.token;
    return token ? `Bearer ${token}` : undefined;
  }

  private endpoint(segments: readonly string[]): string {
    return `${this.config.registry.github.apiUrl}/${segments.map((segment) => encodeURIComponent(segment)).join('/')}`;
  }
}
