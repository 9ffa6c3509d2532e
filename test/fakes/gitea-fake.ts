import { createHash, randomBytes } from 'node:crypto';
import { buildZip } from '../support/zip-builder.js';
import { FakeServer, type FakeAnswer, type FakeRequest } from './fake-server.js';

interface Repo {
  defaultBranch: string;
  branches: Map<string, string>;
  tags: Map<string, string>;
  archives: Map<string, Buffer>;
}

/**
 * A fake Gitea (or Forgejo) site, the repository host of test/extensions/gitea-host.ts, answering
 * the few routes of Gitea's API v1 it reads, in Gitea's shapes (only the members read):
 * `GET /api/v1/repos/{owner}/{repo}` (`default_branch`), `…/branches[/{name}]` and
 * `…/tags[/{name}]` (`page`, `limit`; a branch's commit is `commit.id`, a tag's `commit.sha`),
 * `…/archive/{commit}.zip` (one top folder, as Gitea names it `{repo}/`).
 */
export class GiteaFake extends FakeServer {
  private readonly repos = new Map<string, Repo>();

  constructor() {
    super('Gitea');
  }

  /** Makes a commit holding `files` on `branch` (created, the default when it is the first) and optionally `tag`. */
  push(
    owner: string,
    repo: string,
    push: { branch: string; tag?: string; files: Record<string, string> },
  ): string {
    const key = `${owner}/${repo}`.toLowerCase();
    const entry = this.repos.get(key) ?? {
      defaultBranch: push.branch,
      branches: new Map<string, string>(),
      tags: new Map<string, string>(),
      archives: new Map<string, Buffer>(),
    };
    this.repos.set(key, entry);
    const sha = createHash('sha1').update(randomBytes(16)).digest('hex');
    const folder = `${repo}/`;
    entry.archives.set(
      sha,
      buildZip([
        { name: folder },
        ...Object.entries(push.files).map(([name, data]) => ({ name: `${folder}${name}`, data })),
      ]),
    );
    entry.branches.set(push.branch, sha);
    if (push.tag !== undefined) {
      entry.tags.set(push.tag, sha);
    }
    return sha;
  }

  protected route(request: FakeRequest): FakeAnswer {
    const [api, version, repos, owner, name, what, ...rest] = request.segments;
    const repo =
      api === 'api' && version === 'v1' && repos === 'repos' && request.method === 'GET'
        ? this.repos.get(`${owner}/${name}`.toLowerCase())
        : undefined;
    if (!repo) {
      return { status: 404, body: { message: "The target couldn't be found." } };
    }
    if (what === undefined) {
      return { status: 200, body: { full_name: `${owner}/${name}`, default_branch: repo.defaultBranch } };
    }
    if (what === 'branches' || what === 'tags') {
      const refs = what === 'branches' ? repo.branches : repo.tags;
      const json = (ref: string, sha: string) =>
        what === 'branches' ? { name: ref, commit: { id: sha } } : { name: ref, commit: { sha } };
      const ref = rest.join('/');
      if (ref !== '') {
        const sha = refs.get(ref);
        return sha === undefined
          ? { status: 404, body: { message: 'not found' } }
          : { status: 200, body: json(ref, sha) };
      }
      const limit = Number(request.query.get('limit') ?? 30);
      const page = Number(request.query.get('page') ?? 1);
      const all = [...refs.entries()].sort(([a], [b]) => a.localeCompare(b));
      return {
        status: 200,
        body: all.slice((page - 1) * limit, page * limit).map(([r, sha]) => json(r, sha)),
      };
    }
    if (what === 'archive' && rest.length === 1 && rest[0].endsWith('.zip')) {
      const archive = repo.archives.get(rest[0].slice(0, -'.zip'.length));
      return archive
        ? { status: 200, bytes: archive, headers: { 'content-type': 'application/zip' } }
        : { status: 404, body: { message: 'not found' } };
    }
    return { status: 404, body: { message: 'not found' } };
  }
}
