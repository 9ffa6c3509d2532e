import { FakeServer, type FakeAnswer, type FakeRequest } from './fake-server.js';

/**
 * A fake Jenkins JSON API. Jobs are addressed by their names, nested in folders
 * (`job/a/job/b`); every prefix of a job that is not a job itself is a folder.
 *
 * Routes (under the fake's base URL, like `https://ci.example.org`):
 * - `GET /job/{a}[/job/{b}…]/api/json?tree=builds[fields]{from,to}` → `{_class, builds: […]}` newest first,
 *   with only the fields asked for; a folder answers `{_class}` (no builds)
 * - `GET /job/…/lastBuild/api/json` and `/job/…/{number}/api/json` → one build; 404 when there is none
 * - anything else → Jenkins's HTML 404 page
 */

export interface FakeJenkinsBuild {
  number: number;
  /** Default false. */
  building?: boolean;
  /** Default `SUCCESS` for a finished build, `null` while building. */
  result?: string | null;
  /** Epoch milliseconds; default: a fixed date derived from the number. */
  timestamp?: number;
  /** Milliseconds; default 90 000 for a finished build, 0 while building. */
  duration?: number;
}

type Json = Record<string, unknown>;

interface JobEntry {
  names: string[];
  builds: Json[];
}

const EPOCH = Date.UTC(2024, 0, 1);
const ALL_FIELDS = ['number', 'url', 'result', 'building', 'timestamp', 'duration'];

export class JenkinsFake extends FakeServer {
  /** Builds for jobs nobody set (names joined by `/`); undefined → 404. */
  defaultBuilds?: (job: string) => FakeJenkinsBuild[] | undefined;

  private readonly jobs = new Map<string, JobEntry>();
  private readonly folders = new Set<string>();

  constructor() {
    super('Jenkins');
  }

  /** Creates or replaces a job's builds; `job` is `name`, `folder/name`, or the names as a list. */
  setJob(job: string | string[], builds: FakeJenkinsBuild[]): void {
    const names = typeof job === 'string' ? job.split('/') : job;
    const entry: JobEntry = { names, builds: [] };
    entry.builds = builds
      .map((build) => this.buildJson(entry, build))
      .sort((a, b) => Number(b.number) - Number(a.number));
    this.jobs.set(jobKey(names), entry);
    for (let depth = 1; depth < names.length; depth++) {
      this.folders.add(jobKey(names.slice(0, depth)));
    }
  }

  removeJob(job: string | string[]): void {
    this.jobs.delete(jobKey(typeof job === 'string' ? job.split('/') : job));
  }

  /** The `resource` of a test instance for this job: `job/a/job/b`. */
  static resource(job: string | string[]): string {
    const names = typeof job === 'string' ? job.split('/') : job;
    return names.map((name) => `job/${encodeURIComponent(name)}`).join('/');
  }

  /** The raw path the builds are requested on, for `count()` and `fail()`. */
  static apiPath(job: string | string[]): string {
    return `/${JenkinsFake.resource(job)}/api/json`;
  }

  protected route(request: FakeRequest): FakeAnswer {
    const s = request.segments;
    const names: string[] = [];
    let at = 0;
    while (s[at] === 'job' && at + 1 < s.length) {
      names.push(s[at + 1]);
      at += 2;
    }
    const tail = s.slice(at);
    if (request.method !== 'GET' || names.length === 0 || tail.at(-2) !== 'api' || tail.at(-1) !== 'json') {
      return notFound();
    }
    const key = jobKey(names);
    const job = this.lookup(names);
    if (!job) {
      return this.folders.has(key) && tail.length === 2
        ? { status: 200, body: { _class: 'com.cloudbees.hudson.plugins.folder.Folder' } }
        : notFound();
    }
    if (tail.length === 2) {
      return {
        status: 200,
        body: { _class: 'hudson.model.FreeStyleProject', builds: selectBuilds(job, request.query) },
      };
    }
    if (tail.length === 3) {
      const build =
        tail[0] === 'lastBuild' ? job.builds[0] : job.builds.find((b) => String(b.number) === tail[0]);
      return build ? { status: 200, body: build } : notFound();
    }
    return notFound();
  }

  private lookup(names: string[]): JobEntry | undefined {
    const found = this.jobs.get(jobKey(names));
    if (found) {
      return found;
    }
    const generated = this.defaultBuilds?.(names.join('/'));
    if (generated === undefined) {
      return undefined;
    }
    this.setJob(names, generated);
    return this.jobs.get(jobKey(names));
  }

  private buildJson(job: JobEntry, build: FakeJenkinsBuild): Json {
    const building = build.building ?? false;
    return {
      _class: 'hudson.model.FreeStyleBuild',
      building,
      duration: build.duration ?? (building ? 0 : 90_000),
      number: build.number,
      result: build.result !== undefined ? build.result : building ? null : 'SUCCESS',
      timestamp: build.timestamp ?? EPOCH + build.number * 3_600_000,
      url: `${this.url}/${JenkinsFake.resource(job.names)}/${build.number}/`,
    };
  }
}

/** `tree=builds[a,b]{from,to}` (or `{n}`): the fields and range Jenkins would serialise. */
function selectBuilds(job: JobEntry, query: URLSearchParams): Json[] {
  const tree = query.get('tree');
  if (tree === null) {
    return job.builds;
  }
  const match = /^builds\[([^\]]*)\](?:\{(\d*)(?:,(\d*))?\})?$/.exec(tree.replace(/\s+/g, ''));
  if (!match) {
    return [];
  }
  const fields = match[1].split(',').filter((field) => ALL_FIELDS.includes(field));
  let builds = job.builds;
  if (match[2] !== undefined) {
    const from = match[2] === '' ? 0 : Number(match[2]);
    // `{n}` is the single build n; `{from,}` runs to the end.
    const to = match[3] === undefined ? from + 1 : match[3] === '' ? builds.length : Number(match[3]);
    builds = builds.slice(from, to);
  }
  return builds.map((build) =>
    Object.fromEntries([['_class', build._class], ...fields.map((f) => [f, build[f]])]),
  );
}

function jobKey(names: readonly string[]): string {
  return names.map((name) => encodeURIComponent(name)).join('/');
}

function notFound(): FakeAnswer {
  return {
    status: 404,
    text: '<html><head><title>Error 404 Not Found</title></head><body><h2>HTTP ERROR 404 Not Found</h2></body></html>',
    headers: { 'content-type': 'text/html;charset=iso-8859-1' },
  };
}
