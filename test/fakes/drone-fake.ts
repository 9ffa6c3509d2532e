import { FakeServer, type FakeAnswer, type FakeRequest } from './fake-server.js';

/**
 * Drone CI's build listing (`GET /api/repos/{owner}/{name}/builds?page=1&per_page=N`, newest
 * first, Bearer token), for the test-only CI service of docs/extending.md. Times are epoch
 * seconds, 0 until the build started or finished; statuses are Drone's own words.
 */
export interface FakeDroneBuild {
  number: number;
  /** Default `success`. */
  status?: 'success' | 'failure' | 'error' | 'killed' | 'running' | 'pending' | 'skipped' | 'blocked';
  /** Epoch seconds; default a fixed time derived from the number, 0 for a pending build. */
  started?: number;
  /** Epoch seconds; default 75 s after the start for a finished build, 0 otherwise. */
  finished?: number;
}

const EPOCH_SECONDS = Date.UTC(2024, 0, 1) / 1000;
const UNFINISHED = new Set(['running', 'pending', 'blocked']);

export class DroneFake extends FakeServer {
  private readonly repos = new Map<string, Record<string, unknown>[]>();
  /** Builds created through the API (`POST /api/repos/{owner}/{name}/builds?branch=`): the repository and branch. */
  readonly triggers: { slug: string; branch: string | null }[] = [];

  constructor() {
    super('Drone');
  }

  /** Creates or replaces a repository's builds (`owner/name`). */
  setRepo(slug: string, builds: FakeDroneBuild[]): void {
    this.repos.set(
      slug,
      builds.map((build) => this.buildJson(slug, build)).sort((a, b) => Number(b.number) - Number(a.number)),
    );
  }

  /** The `resource` of a test instance for this repository. */
  static resource(slug: string): string {
    return `repos/${slug}`;
  }

  protected route(request: FakeRequest): FakeAnswer {
    const [api, repos, owner, name, builds, ...rest] = request.segments;
    if (
      request.method === 'POST' &&
      api === 'api' &&
      repos === 'repos' &&
      builds === 'builds' &&
      rest.length === 0
    ) {
      return this.createBuild(`${owner}/${name}`, request);
    }
    if (
      request.method !== 'GET' ||
      api !== 'api' ||
      repos !== 'repos' ||
      builds !== 'builds' ||
      rest.length > 0
    ) {
      return { status: 404, body: { message: 'Not Found' } };
    }
    const listed = this.repos.get(`${owner}/${name}`);
    if (listed === undefined) {
      return { status: 404, body: { message: 'Not Found' } };
    }
    const perPage = Math.min(Number(request.query.get('per_page') ?? '25') || 25, 100);
    return { status: 200, body: listed.slice(0, perPage) };
  }

  /** Drone's "create a build": the new build is pending, numbered after the latest. */
  private createBuild(slug: string, request: FakeRequest): FakeAnswer {
    this.triggers.push({ slug, branch: request.query.get('branch') });
    if (!request.headers.authorization?.startsWith('Bearer ')) {
      return { status: 401, body: { message: 'Unauthorized' } };
    }
    const listed = this.repos.get(slug);
    if (listed === undefined) {
      return { status: 404, body: { message: 'Not Found' } };
    }
    const number = Math.max(0, ...listed.map((build) => Number(build.number))) + 1;
    const build = this.buildJson(slug, { number, status: 'pending', started: 0 });
    this.repos.set(slug, [build, ...listed]);
    return { status: 200, body: build };
  }

  private buildJson(slug: string, build: FakeDroneBuild): Record<string, unknown> {
    const status = build.status ?? 'success';
    const started = build.started ?? (status === 'pending' ? 0 : EPOCH_SECONDS + build.number * 3600);
    const finished = build.finished ?? (UNFINISHED.has(status) ? 0 : started + 75);
    return {
      id: 1000 + build.number,
      number: build.number,
      status,
      event: 'push',
      created: started || EPOCH_SECONDS,
      started,
      finished,
      link: `${this.url}/${slug}/${build.number}`,
    };
  }
}
