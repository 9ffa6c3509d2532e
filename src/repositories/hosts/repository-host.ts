import { Inject, Injectable } from '@nestjs/common';

/** A `roc_link` naming a repository on a host (GitHub's: `https://github.com/{owner}/{repo}[/tree/{ref}]`). */
export interface RepositoryLink {
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
}

/**
 * A repository host (GitHub today): what the registry and following ask of one. A new host is a
 * class implementing this and one entry in RepositoriesModule's HOSTS; nothing else names it.
 * Each turns its API's failures into DomainErrors: `invalid_input` for what the caller asked
 * (a repository or ref that is not there), UpstreamUnavailable when the host fails or limits the rate.
 */
export interface RepositoryHost {
  /** The host's name in messages and logs: `github`. */
  readonly name: string;
  /**
   * The repository a link names on this host; undefined for a link elsewhere. Throws
   * DomainError('invalid_input') for a link on this host that names no repository.
   */
  parseLink(link: string): RepositoryLink | undefined;
  /** The ref to register and its commit: the link's ref, else a ref named like `version`, else the default branch. */
  resolve(link: RepositoryLink, version: string): Promise<RepositorySource>;
  /** Where the zip archive of `commit` is downloaded from. */
  archive(link: RepositoryLink, commit: string): Promise<RepositoryArchive>;
  /** A page (from 1) of the branches or tags, asked with the page's last ETag: `unchanged` when it is. */
  refsPage(link: RepositoryLink, kind: RefKind, page: number, etag?: string): Promise<RefsPage>;
  /** The commit a tag names now, or undefined when the tag is gone. */
  tagCommit(link: RepositoryLink, tag: string): Promise<string | undefined>;
}

/** Injection token of every RepositoryHost, in the order links are offered to them. */
export const REPOSITORY_HOSTS = Symbol('REPOSITORY_HOSTS');

/** The hosts, chosen by the link a caller has. */
@Injectable()
export class RepositoryHosts {
  constructor(@Inject(REPOSITORY_HOSTS) private readonly hosts: readonly RepositoryHost[]) {}

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
}
