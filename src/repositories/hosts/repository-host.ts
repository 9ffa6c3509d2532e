import { Inject, Injectable, type Provider } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { registrationsProvider } from '../../common/discovered.js';
import { DomainError } from '../../common/errors/domain-error.js';

/** A `roc_link` naming a repository on a host (GitHub's: `https://github.com/{owner}/{repo}[/tree/{ref}]`). */
export interface RepositoryLink {
  /**
   * Where the host's web pages are, without a trailing slash (`https://github.com`): with `owner`
   * and `repo` it makes the repository's page (repositoryPage), which its host parses back.
   */
  site: string;
  /** The user or organisation; on hosts with nested groups, the whole group path (`group/subgroup`). */
  owner: string;
  repo: string;
  /** The `/tree/{ref}` part: a branch, tag or commit. */
  ref?: string;
}

/** The ref whose archive is registered, and the commit it named then (API.md 7.1 `source`). */
export interface RepositorySource {
  ref: string;
  commit: string;
}

/** A branch or tag and the commit it names (a host's branches and tags listings). */
export interface RepositoryRef {
  name: string;
  commit: string;
}

/** The branches (`heads`) or the tags of a repository. */
export type RefKind = 'heads' | 'tags';

/** One page of a listing of refs, or that it has not changed since its ETag. */
export type RefsPage =
  { kind: 'unchanged' } | { kind: 'refs'; refs: RepositoryRef[]; etag?: string; last: boolean };

/** Where the archive of a resolved repository is downloaded from. */
export interface RepositoryArchive {
  url: string;
  /** Sent with the download (to that URL's origin only); absent when the URL carries its own access. */
  authorization?: string;
  /**
   * The URL is on the origin of a service the operator configured, whose API the host calls
   * already: the download reaches it on a private address too (that origin only).
   */
  trusted?: boolean;
}

/** The longest ref stored (the `source_ref` column). */
export const MAX_REF_LENGTH = 255;

/**
 * Why `ref` cannot be a git ref name (the rules of `git check-ref-format` that matter here), or
 * undefined when it can. `..` in particular is refused: in a URL path it would climb.
 */
export function refProblem(ref: string): string | undefined {
  if (ref.length > MAX_REF_LENGTH) {
    return `longer than ${MAX_REF_LENGTH} characters`;
  }
  if (ref.includes('..')) {
    return "it contains '..'";
  }
  // Space, DEL and control characters, and the characters git gives a meaning in revisions.
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(ref) || ref.includes('@{') || ref === '@') {
    return 'it contains a character git does not allow in ref names';
  }
  if (
    ref.startsWith('/') ||
    ref.endsWith('/') ||
    ref.endsWith('.') ||
    ref.includes('//') ||
    ref.split('/').some((part) => part.startsWith('.') || part.endsWith('.lock'))
  ) {
    return 'it is not a well-formed ref name';
  }
  return undefined;
}

/** The repository's page: a link its host's parseLink reads back to the same repository. */
export function repositoryPage(link: RepositoryLink): string {
  return `${link.site}/${link.owner}/${link.repo}`;
}

/** The repository answers 404: deleted, renamed away, or no longer readable with the host's credentials. */
export class RepositoryGone extends DomainError {
  constructor(message: string) {
    super('invalid_input', message);
  }
}

/**
 * A repository host: what the registry and following ask of one. A new host is a class
 * implementing this, marked @RegisterRepositoryHost(), and one line in a module's providers
 * (RepositoriesModule's HOSTS for the built-in ones); nothing else names it.
 * Each turns its API's failures into DomainErrors: `invalid_input` for what the caller asked
 * (a repository or ref that is not there), UpstreamUnavailable when the host fails or limits the rate.
 */
export interface RepositoryHost {
  /** The host's name in messages and logs: `github`. */
  readonly name: string;
  /** The repository as messages name it: `the GitHub repository owner/repo`. */
  describe(link: RepositoryLink): string;
  /** The `roc_link` that registers `ref` of the repository (a followed tag or branch). */
  refLink(link: RepositoryLink, ref: string): string;
  /**
   * The API whose rate limit the repository's reads count against: a pause of following after a
   * rate limit holds for every repository answering the same.
   */
  apiUrl(link: RepositoryLink): string;
  /**
   * The repository a link names on this host; undefined for a link elsewhere. Throws
   * DomainError('invalid_input') for a link on this host that names no repository.
   */
  parseLink(link: string): RepositoryLink | undefined;
  /** The ref to register and its commit: the link's ref, else a ref named like `version`, else the default branch. */
  resolve(link: RepositoryLink, version: string): Promise<RepositorySource>;
  /** Where the zip archive of `commit` is downloaded from. */
  archive(link: RepositoryLink, commit: string): Promise<RepositoryArchive>;
  /**
   * A page (from 1) of the branches or tags, asked with the page's last ETag: `unchanged` when it
   * is. Throws RepositoryGone when the repository is not there (any more).
   */
  refsPage(link: RepositoryLink, kind: RefKind, page: number, etag?: string): Promise<RefsPage>;
  /** The commit a tag names now, or undefined when the tag is gone. */
  tagCommit(link: RepositoryLink, tag: string): Promise<string | undefined>;
}

/** Registers a RepositoryHost class: with this decorator and listed in any module's providers. */
export const RegisterRepositoryHost = DiscoveryService.createDecorator<void>();

/** Injection token of the function listing every registered RepositoryHost, in registration order. */
export const REPOSITORY_HOSTS = Symbol('REPOSITORY_HOSTS');

/** REPOSITORY_HOSTS as the app provides it: every class marked with RegisterRepositoryHost. */
export const REPOSITORY_HOSTS_PROVIDER: Provider = registrationsProvider(
  REPOSITORY_HOSTS,
  RegisterRepositoryHost,
);

/**
 * The hosts, chosen by the link a caller has; links are offered to them in registration order
 * (modules as the app imports them: the built-in hosts first).
 */
@Injectable()
export class RepositoryHosts {
  private registered?: readonly RepositoryHost[];

  constructor(@Inject(REPOSITORY_HOSTS) private readonly list: () => readonly RepositoryHost[]) {}

  /** Listed on first use: every provider of the app exists once anything asks for a host. */
  private get hosts(): readonly RepositoryHost[] {
    this.registered ??= this.list();
    return this.registered;
  }

  /**
   * The host a link names a repository on, with that repository; undefined for a link that is no
   * host's (a crate's own URL). Throws as the host's parseLink does.
   */
  forLink(link: string): { host: RepositoryHost; repository: RepositoryLink } | undefined {
    for (const host of this.hosts) {
      const repository = host.parseLink(link);
      if (repository) {
        return { host, repository };
      }
    }
    return undefined;
  }

  /**
   * The host of a repository recorded before (a followed repository's row); throws
   * DomainError('invalid_input') when no host knows its site any more (a host's settings changed).
   */
  of(link: RepositoryLink): RepositoryHost {
    const page = repositoryPage(link);
    const found = this.forLink(page);
    if (!found) {
      throw new DomainError('invalid_input', `${page} is not a repository on a known host any more`);
    }
    return found.host;
  }

  /** The hosts' names, in the order links are offered to them. */
  names(): string[] {
    return this.hosts.map((host) => host.name);
  }
}
