import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { FakeServer, type FakeAnswer, type FakeRequest } from './fake-server.js';

/**
 * A fake Jenkins JSON API. Jobs are addressed by their names, nested in folders
 * (`job/a/job/b`); every prefix of a job that is not a job itself is a folder.
 *
 * Routes (under the fake's base URL, like `https://ci.example.org`):
 * - `GET /job/{a}[/job/{b}…]/api/json?tree=builds[fields]{from,to}` → `{_class, builds: […]}` newest first,
 *   with only the fields asked for; a folder answers `{_class}` (no builds)
 * - `GET /job/…/lastBuild/api/json` and `/job/…/{number}/api/json` → one build; 404 when there is none
 * - `POST /job/…/build` → 201 with the queue item in `Location`, and a new build of the job
 *   (`triggeredBuild`, default building, started now); what each received is in `triggers`. With
 *   `csrf` on (Jenkins's default) a POST without a valid crumb is a 403 ("No valid crumb was
 *   included in the request"): `GET /crumbIssuer/api/json` issues one, bound to the session
 *   cookie it sets (404 with `csrf` off, as without a crumb issuer)
 * - `GET /job/…/{number}/consoleText` → the build's log as plain text (`setConsoleText`; a build
 *   without one: 404)
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
  /** CSRF protection: POSTs need a crumb of the crumb issuer and its session cookie. */
  csrf = false;
  /** Builds started by POSTs: the job's names, and the crumb header and cookie sent. */
  readonly triggers: { job: string[]; crumb: unknown; cookie: unknown }[] = [];
  /** What a triggered build looks like; default building, started now. */
  triggeredBuild: () => Omit<FakeJenkinsBuild, 'number'> = () => ({ building: true, timestamp: Date.now() });
  /** session → crumb, as the crumb issuer handed them out. */
  private readonly crumbs = new Map<string, string>();
  private queueItems = 0;
  /** `job key/number` → the build's console log, or a function making a large one as it is read. */
  private readonly consoles = new Map<string, string | (() => Readable)>();

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

  /** The console log of one build of a job. */
  setConsoleText(job: string | string[], number: number, log: string | (() => Readable)): void {
    this.consoles.set(`${jobKey(typeof job === 'string' ? job.split('/') : job)}/${number}`, log);
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
    if (request.method === 'GET' && names.length === 0 && s.join('/') === 'crumbIssuer/api/json') {
      return this.issueCrumb();
    }
    if (request.method === 'POST' && names.length > 0 && tail.length === 1 && tail[0] === 'build') {
      return this.startBuild(names, request);
    }
    if (request.method === 'GET' && names.length > 0 && tail.length === 2 && tail[1] === 'consoleText') {
      const log = this.consoles.get(`${jobKey(names)}/${tail[0]}`);
      const headers = { 'content-type': 'text/plain;charset=utf-8' };
      return log === undefined
        ? notFound()
        : typeof log === 'string'
          ? { status: 200, text: log, headers }
          : { status: 200, stream: log, headers };
    }
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

  private issueCrumb(): FakeAnswer {
    if (!this.csrf) {
      return notFound();
    }
    const session = randomBytes(8).toString('hex');
    const crumb = randomBytes(16).toString('hex');
    this.crumbs.set(session, crumb);
    return {
      status: 200,
      body: { _class: 'hudson.security.csrf.DefaultCrumbIssuer', crumb, crumbRequestField: 'Jenkins-Crumb' },
      headers: { 'set-cookie': `JSESSIONID.fake=${session}; Path=/; HttpOnly` },
    };
  }

  private startBuild(names: string[], request: FakeRequest): FakeAnswer {
    const crumb = request.headers['jenkins-crumb'];
    const cookie = request.headers.cookie;
    this.triggers.push({ job: names, crumb, cookie });
    if (this.csrf) {
      const session = /JSESSIONID\.fake=([0-9a-f]+)/.exec(cookie ?? '')?.[1];
      if (session === undefined || this.crumbs.get(session) !== crumb) {
        return {
          status: 403,
          text: '<html><head><title>Error 403 No valid crumb was included in the request</title></head><body><h2>HTTP ERROR 403 No valid crumb was included in the request</h2></body></html>',
          headers: { 'content-type': 'text/html;charset=iso-8859-1' },
        };
      }
    }
    const job = this.lookup(names);
    if (!job) {
      return notFound();
    }
    const number = Math.max(0, ...job.builds.map((build) => Number(build.number))) + 1;
    job.builds = [this.buildJson(job, { ...this.triggeredBuild(), number }), ...job.builds];
    return {
      status: 201,
      text: '',
      headers: { location: `${this.url}/queue/item/${++this.queueItems}/` },
    };
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
