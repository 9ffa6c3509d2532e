import { DomainError } from '../common/errors/domain-error.js';
import { canonicalTarget, serviceTypeNamed, type CrateServiceType } from './testing-service-catalog.js';
import { isRecord } from '../common/is-record.js';
import {
  ABOUT,
  BUILT_IN_TERMS,
  COMPUTATIONAL_WORKFLOW,
  CONFORMS_TO,
  type CrateEntity,
  CrateGraph,
  DEFINITION,
  ENGINE_VERSION,
  INSTANCE,
  MAIN_ENTITY,
  MENTIONS,
  NAME,
  PROGRAMMING_LANGUAGE,
  RESOURCE,
  RUNS_ON,
  TEST,
  TEST_INSTANCE,
  TEST_SUITE,
  URL_TERM,
  idOf,
} from './crate-graph.js';

/** What the registry needs from a Workflow Testing RO-Crate's metadata. */
export interface ParsedCrate {
  /** The root dataset's name. */
  name?: string;
  mainWorkflow?: ParsedWorkflow;
  suites: ParsedSuite[];
  /** The metadata document as it was given, for replies that return the crate's JSON-LD. */
  metadata: object;
}

export interface ParsedWorkflow {
  /** The main workflow's `@id`, a path in the crate. */
  id: string;
  name?: string;
  /** Its `@type` values as the crate writes them (e.g. `File`, `ComputationalWorkflow`). */
  types: string[];
  programmingLanguage?: { id: string; name?: string };
}

export interface ParsedSuite {
  /** The suite's `@id` in the crate, e.g. `#test1`. */
  id: string;
  name?: string;
  /** Null when the suite names no definition. */
  definition: ParsedDefinition | null;
  instances: ParsedInstance[];
}

export interface ParsedDefinition {
  /** The definition's `@id`, usually the path of the test file in the crate. */
  path: string;
  /** `…#PlanemoEngine` → `planemo`; null when the definition has no `conformsTo`. */
  engineType: string | null;
  engineVersion: string | null;
}

export interface ParsedInstance {
  /** The instance's `@id` in the crate, e.g. `#test1_1`. */
  id: string;
  name?: string;
  /** The type of the service it runs on (`…#<Name>Service` → `<name>`); always one of the known service types. */
  serviceType: string;
  /** The API base URL of the service, http(s), without trailing slashes. */
  serviceUrl: string;
  /** Where the tests live on that service, e.g. `repo/1002447` or `job/build`; empty when the crate gives none. */
  resource: string;
  /**
   * Why this instance can never be checked (API.md 12: it is registered, with an issue, and never
   * checked); absent when it can be.
   */
  uncheckedReason?: string;
  /** Its service runs the suite itself (API.md 17); absent for the CI services. */
  managed?: true;
}

export interface ParseOptions {
  /**
   * The CI services an instance may run on, with the terms that name them (the registered
   * testing services); none when absent, so a crate with test instances is refused.
   */
  services?: readonly CrateServiceType[];
}

const DESCRIPTOR_IDS = ['ro-crate-metadata.json', './ro-crate-metadata.json', 'ro-crate-metadata.jsonld'];

/**
 * Reads the parts of a Workflow Testing RO-Crate the registry stores: the root dataset's
 * name, the main workflow, and each TestSuite with its TestInstances and TestDefinition.
 * Throws DomainError('invalid_input') with a detail the caller can show as it is.
 */
export function parseRoCrate(metadata: unknown, options: ParseOptions = {}): ParsedCrate {
  return parseCrateGraph(readCrateGraph(metadata, options), options);
}

/**
 * The metadata's JSON-LD graph with its terms expanded, for `parseCrateGraph` and for the checks
 * that look at more of the crate than the registry stores. Throws DomainError('invalid_input')
 * when the metadata is not a JSON object.
 */
export function readCrateGraph(metadata: unknown, options: ParseOptions = {}): CrateGraph {
  if (typeof metadata !== 'object' || metadata === null) {
    throw invalid('the crate metadata is not a JSON object');
  }
  // The terms naming CI services come from the registered services, beside the built-in ones.
  const builtIns = new Map([
    ...BUILT_IN_TERMS,
    ...(options.services ?? []).flatMap((service) =>
      [service.crateTerm, ...(service.otherCrateTerms ?? [])].map((term): [string, string] => [
        term,
        `${TEST}${term}`,
      ]),
    ),
  ]);
  return new CrateGraph(metadata, builtIns);
}

/** `parseRoCrate` of a graph read already (with the same options). */
export function parseCrateGraph(graph: CrateGraph, options: ParseOptions = {}): ParsedCrate {
  const services = options.services ?? [];
  if (!findDescriptor(graph)) {
    throw invalid(
      'the crate metadata has no root dataset (no ro-crate-metadata.json descriptor in its @graph)',
    );
  }
  const root = rootOf(graph);
  if (!root) {
    throw invalid(
      'the crate metadata has no root dataset (the descriptor is not about an entity of the crate)',
    );
  }
  return {
    name: textOf(root.props.get(NAME)),
    mainWorkflow: parseMainWorkflow(graph, root),
    suites: findSuites(graph, root).map((suite) => parseSuite(graph, suite, services)),
    metadata: graph.document,
  };
}

/**
 * The main workflow alone, as parseRoCrate finds it (undefined when the crate names none, or has
 * no root dataset): for crates registered already, whose test instances were checked then and
 * need not be again. Throws as readCrateGraph.
 */
export function parseMainWorkflowOf(metadata: unknown): ParsedWorkflow | undefined {
  const graph = readCrateGraph(metadata);
  const root = rootOf(graph);
  return root === undefined ? undefined : parseMainWorkflow(graph, root);
}

/** The root data entity: the entity the metadata descriptor is `about`. */
export function rootOf(graph: CrateGraph): CrateEntity | undefined {
  const rootRef = findDescriptor(graph)?.props.get(ABOUT)?.[0];
  return rootRef === undefined ? undefined : graph.resolve(rootRef);
}

/** `…#PlanemoEngine` → `planemo`: the last segment of the IRI, lower-cased, without a trailing `Engine`. */
export function engineTypeOf(iri: string): string | null {
  return lastSegment(iri).replace(/engine$/, '') || null;
}

/** `…#ExampleService` → `example`: the last segment of the IRI, lower-cased, without a trailing `Service`. */
export function serviceTypeOf(iri: string): string | null {
  return lastSegment(iri).replace(/service$/, '') || null;
}

function lastSegment(iri: string): string {
  return (
    iri
      .replace(/[#/]+$/, '')
      .split(/[#/:]/)
      .pop() ?? ''
  ).toLowerCase();
}

function findDescriptor(graph: CrateGraph): CrateEntity | undefined {
  for (const id of DESCRIPTOR_IDS) {
    const entity = graph.byId.get(id);
    if (entity?.props.has(ABOUT)) {
      return entity;
    }
  }
  // Crates published with absolute identifiers name the descriptor by a full URL.
  return graph.entities.find(
    (entity) =>
      entity.props.has(ABOUT) &&
      (entity.id?.endsWith('/ro-crate-metadata.json') === true ||
        graph.refs(entity.props.get(CONFORMS_TO)).some((id) => id.startsWith('https://w3id.org/ro/crate/'))),
  );
}

/**
 * The root's `mainEntity`; without one, the crate's only ComputationalWorkflow (whichever
 * Bioschemas spelling its type has), as crates that predate Workflow RO-Crate describe it.
 */
function parseMainWorkflow(graph: CrateGraph, root: CrateEntity): ParsedWorkflow | undefined {
  let ref = root.props.get(MAIN_ENTITY)?.[0];
  if (ref === undefined) {
    const workflows = graph.entities.filter((entity) => entity.types.has(COMPUTATIONAL_WORKFLOW));
    ref = workflows.length === 1 ? workflows[0].id : undefined;
  }
  const id = ref === undefined ? undefined : idOf(ref);
  if (id === undefined) {
    return undefined;
  }
  const entity = graph.resolve(ref);
  const workflow: ParsedWorkflow = { id, types: entity?.rawTypes ?? [] };
  const name = textOf(entity?.props.get(NAME));
  if (name !== undefined) {
    workflow.name = name;
  }
  const languageRef = entity?.props.get(PROGRAMMING_LANGUAGE)?.[0];
  const languageId = languageRef === undefined ? undefined : (idOf(languageRef) ?? textOf([languageRef]));
  if (languageId !== undefined) {
    const languageName = textOf(graph.resolve(languageRef)?.props.get(NAME));
    workflow.programmingLanguage =
      languageName === undefined ? { id: languageId } : { id: languageId, name: languageName };
  }
  return workflow;
}

/** The suites the root mentions come first, in the crate's order, then any other TestSuite of the graph. */
function findSuites(graph: CrateGraph, root: CrateEntity): CrateEntity[] {
  const mentioned = [...(root.props.get(MENTIONS) ?? []), ...(root.props.get(ABOUT) ?? [])]
    .map((ref) => graph.resolve(ref))
    .filter((entity): entity is CrateEntity => entity !== undefined);
  const suites: CrateEntity[] = [];
  for (const entity of [...mentioned, ...graph.entities]) {
    if (entity.types.has(TEST_SUITE) && !suites.includes(entity)) {
      suites.push(entity);
    }
  }
  if (suites.some((suite) => suite.id === undefined)) {
    throw invalid('a TestSuite of the crate has no @id');
  }
  return suites;
}

function parseSuite(
  graph: CrateGraph,
  suite: CrateEntity,
  services: readonly CrateServiceType[],
): ParsedSuite {
  const suiteId = suite.id ?? '';
  const instances: ParsedInstance[] = [];
  for (const ref of suite.props.get(INSTANCE) ?? []) {
    const entity = graph.resolve(ref);
    // What the crate does not describe as a test instance is none: the crate breaks a rule of the
    // Workflow Testing RO-Crate profile, which the checks record, and is registered (API.md 12).
    if (!entity || !isTestInstance(entity)) {
      continue;
    }
    const instance = parseInstance(graph, entity, suiteId, services);
    if (!instances.some((other) => other.id === instance.id)) {
      instances.push(instance);
    }
  }
  const parsed: ParsedSuite = { id: suiteId, definition: parseDefinition(graph, suite), instances };
  const name = textOf(suite.props.get(NAME));
  if (name !== undefined) {
    parsed.name = name;
  }
  return parsed;
}

function parseInstance(
  graph: CrateGraph,
  entity: CrateEntity,
  suiteId: string,
  services: readonly CrateServiceType[],
): ParsedInstance {
  const known = services.map((service) => service.type);
  if (entity.id === undefined) {
    throw invalid(`a test instance of the test suite ${quote(suiteId)} has no @id`);
  }
  const id = entity.id;
  const runsOn = graph.refs(entity.props.get(RUNS_ON))[0];
  if (runsOn === undefined) {
    throw invalid(`the test instance ${quote(id)} does not say which service it runs on (runsOn)`);
  }
  const url = graph.refs(entity.props.get(URL_TERM))[0] ?? textOf(entity.props.get(URL_TERM));
  const named = serviceTypeNamed(services, lastSegment(runsOn))?.type ?? serviceTypeOf(runsOn);
  // A runsOn no service answers to still runs where its URL is, on a host one service claims.
  const serviceType =
    named !== null && known.includes(named)
      ? named
      : url !== undefined && isHttpUrl(url)
        ? (services.find((service) => service.claimsUrl?.(url) === true)?.type ?? null)
        : null;
  const service = services.find((candidate) => candidate.type === serviceType);
  if (serviceType === null || service === undefined) {
    throw invalid(
      `a test instance uses an unknown service type: ${quote(runsOn)} (instance ${quote(id)}; known: ${known.join(', ')})`,
    );
  }
  if (url === undefined) {
    throw invalid(`the test instance ${quote(id)} has no url`);
  }
  if (!isHttpUrl(url)) {
    throw invalid(`the test instance ${quote(id)} has a url that is not http(s): ${quote(url)}`);
  }
  // One test service row per (type, url): `https://ci.example.org/` and `https://ci.example.org` are one
  // service, and so are a service's web site and its API where the service says so.
  const resource = textOf(entity.props.get(RESOURCE)) ?? service.defaultResource;
  const target = canonicalTarget(services, serviceType, { url, resource: resource ?? '' });
  const instance: ParsedInstance = {
    id,
    serviceType,
    serviceUrl: target.url,
    resource: resource === undefined ? '' : target.resource,
  };
  if (service.managed === true) {
    instance.managed = true;
  }
  if (resource === undefined) {
    instance.uncheckedReason = 'the crate gives it no resource (where its tests are on the service)';
  }
  const name = textOf(entity.props.get(NAME));
  if (name !== undefined) {
    instance.name = name;
  }
  return instance;
}

/**
 * Typed TestInstance, or saying which service it runs on: crates written before the vocabulary
 * had types name their instances by `runsOn` alone.
 */
function isTestInstance(entity: CrateEntity): boolean {
  return entity.types.has(TEST_INSTANCE) || entity.props.has(RUNS_ON);
}

function parseDefinition(graph: CrateGraph, suite: CrateEntity): ParsedDefinition | null {
  const ref = suite.props.get(DEFINITION)?.[0];
  const path = ref === undefined ? undefined : idOf(ref);
  if (ref === undefined || path === undefined) {
    return null;
  }
  const entity = graph.resolve(ref);
  const conformsTo = graph.refs(entity?.props.get(CONFORMS_TO));
  // A definition may conform to several things; the test engine is the one in the test vocabulary.
  const engine = conformsTo.find((iri) => iri.startsWith(TEST)) ?? conformsTo[0];
  return {
    path,
    engineType: engine === undefined ? null : engineTypeOf(engine),
    engineVersion: textOf(entity?.props.get(ENGINE_VERSION)) ?? null,
  };
}

/** The first text of a property: a string, a number, or a value object. Blank text counts as none. */
function textOf(values: unknown[] | undefined): string | undefined {
  for (const value of values ?? []) {
    const raw = isRecord(value) ? value['@value'] : value;
    if (typeof raw === 'string' && raw.trim() !== '') {
      return raw.trim();
    }
    if (typeof raw === 'number' && Number.isFinite(raw)) {
      return String(raw);
    }
  }
  return undefined;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

function quote(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function invalid(detail: string): DomainError {
  return new DomainError('invalid_input', detail);
}
