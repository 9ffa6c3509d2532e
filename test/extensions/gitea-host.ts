import { Injectable, Module } from '@nestjs/common';
import { DomainError } from '../../src/common/errors/domain-error.js';
import { UpstreamUnavailable } from '../../src/crates/index.js';
import {
  refProblem,
  RegisterRepositoryHost,
  RepositoryGone,
  type RefKind,
  type RefsPage,
  type RepositoryArchive,
  type RepositoryHost,
  type RepositoryLink,
  type RepositorySource,
} from '../../src/repositories/hosts/repository-host.js';

/**
 * A repository host that lives only in the tests: Gitea (and Forgejo, Codeberg), read through its
 * API v1 (test/fakes/gitea-fake.ts), added as docs/extending.md adds a CI service. No file of src/
 * names it. Its sites stand for what a real host would read from its settings.
 */
export const GITEA_SITES = new Set<string>();

const REFS_PER_PAGE = 50;

/** Step 1: the class, marked for the registry of repository hosts. */
@RegisterRepositoryHost()
@Injectable()
export class GiteaRepositories implements RepositoryHost {
  readonly name = 'gitea';

  /** `{site}/{owner}/{repo}`, optionally `/src/branch/{ref}` or `/src/tag/{ref}` (Gitea's pages). */
  parseLink(link: string): RepositoryLink | undefined {
    const site = [...GITEA_SITES].find((candidate) => link.startsWith(`${candidate}/`));
    if (site === undefined) {
      return undefined;
    }
    const [owner, repo, src, kind, ...ref] = link
      .slice(site.length + 1)
      .replace(/[?#].*$/, '')
      .split('/');
    if (
      !/^[\w.-]+$/.test(owner ?? '') ||
      !/^[\w.-]+$/.test(repo ?? '') ||
      owner.startsWith('.') ||
      repo.startsWith('.')
    ) {
      throw new DomainError('invalid_input', `${link} names no Gitea repository`);
    }
    if (src === undefined || src === '') {
      return { site, owner, repo: repo.replace(/\.git$/, '') };
    }
    const name = ref.map(decodeURIComponent).join('/');
    if (src !== 'src' || (kind !== 'branch' && kind !== 'tag') || name === '' || refProblem(name)) {
      throw new DomainError('invalid_input', `${link} names no ref of a Gitea repository`);
    }
    return { site, owner, repo, ref: name };
  }

  describe(link: RepositoryLink): string {
    return `the Gitea repository ${link.owner}/${link.repo}`;
  }

  refLink(link: RepositoryLink, ref: string): string {
    return `${link.site}/${link.owner}/${link.repo}/src/branch/${ref.split('/').map(encodeURIComponent).join('/')}`;
  }

  apiUrl(link: RepositoryLink): string {
    return `${link.site}/api/v1`;
  }

  /** The link's ref, else a tag or branch named like `version`, else the default branch. */
  async resolve(link: RepositoryLink, version: string): Promise<RepositorySource> {
    const repo = (await this.get(link, '')) as { default_branch?: string } | undefined;
    if (repo === undefined) {
      throw new DomainError('invalid_input', `${this.describe(link)} does not exist`);
    }
    for (const ref of [link.ref ?? version, ...(link.ref === undefined ? [repo.default_branch ?? ''] : [])]) {
      const commit = refProblem(ref) === undefined ? await this.commitOf(link, ref) : undefined;
      if (commit !== undefined) {
        return { ref, commit };
      }
    }
    throw new DomainError('invalid_input', `${this.describe(link)} has no ref '${link.ref ?? version}'`);
  }

  archive(link: RepositoryLink, commit: string): Promise<RepositoryArchive> {
    return Promise.resolve({
      url: `${this.apiUrl(link)}/repos/${link.owner}/${link.repo}/archive/${commit}.zip`,
    });
  }

  async refsPage(link: RepositoryLink, kind: RefKind, page: number): Promise<RefsPage> {
    const list = await this.get(
      link,
      `/${kind === 'heads' ? 'branches' : 'tags'}?page=${page}&limit=${REFS_PER_PAGE}`,
    );
    if (!Array.isArray(list)) {
      throw new RepositoryGone(`${this.describe(link)} does not exist`);
    }
    const refs = (list as { name: string; commit: { id?: string; sha?: string } }[]).map((ref) => ({
      name: ref.name,
      commit: ref.commit.id ?? ref.commit.sha ?? '',
    }));
    return { kind: 'refs', refs, last: refs.length < REFS_PER_PAGE };
  }

  async tagCommit(link: RepositoryLink, tag: string): Promise<string | undefined> {
    const found = (await this.get(link, `/tags/${encodeURIComponent(tag)}`)) as
      { commit: { sha: string } } | undefined;
    return found?.commit.sha;
  }

  /** A tag's or branch's commit (tags first), undefined when neither is there. */
  private async commitOf(link: RepositoryLink, ref: string): Promise<string | undefined> {
    return (
      (await this.tagCommit(link, ref)) ??
      (
        (await this.get(link, `/branches/${encodeURIComponent(ref)}`)) as
          { commit: { id: string } } | undefined
      )?.commit.id
    );
  }

  /** The JSON of `{api}/repos/{owner}/{repo}{rest}`; undefined on a 404. */
  private async get(link: RepositoryLink, rest: string): Promise<unknown> {
    const response = await fetch(`${this.apiUrl(link)}/repos/${link.owner}/${link.repo}${rest}`, {
      signal: AbortSignal.timeout(5000),
    });
    if (response.status === 404) {
      return undefined;
    }
    if (!response.ok) {
      throw new UpstreamUnavailable(`Gitea answered ${response.status}`);
    }
    return response.json();
  }
}

/** Step 2: the one registration line, here in a test module instead of RepositoriesModule. */
@Module({ providers: [GiteaRepositories] })
export class GiteaHostModule {}
