import { DomainError } from '../../common/errors/domain-error.js';
import { canonicalTarget, type CrateServiceType } from '../testing-service-catalog.js';
import { isRecord } from '../../common/is-record.js';

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
}

export interface ParseOptions {
  /**
   * The CI services an instance may run on, with the terms that name them (the registered
   * testing services); none when absent, so a crate with test instances is refused.
   */
  services?: readonly CrateServiceType[];
}

export const SCHEMA = 'http://schema.org/';
export const TEST = 'https://w3id.org/ro/terms/test#';
const DCT = 'http://purl.org/dc/terms/';
/**
 * Bioschemas terms in the spelling of the RO-Crate 1.3 context. The 1.1 and 1.2 contexts (and
 * crates written against them) name the same terms otherwise; `canonical` folds those into this one.
 */
const BIOSCHEMAS = 'https://bioschemas.org/terms/';
export const COMPUTATIONAL_WORKFLOW = `${BIOSCHEMAS}ComputationalWorkflow`;

const ABOUT = `${SCHEMA}about`;
const NAME = `${SCHEMA}name`;
export const MENTIONS = `${SCHEMA}mentions`;
export const MAIN_ENTITY = `${SCHEMA}mainEntity`;
const PROGRAMMING_LANGUAGE = `${SCHEMA}programmingLanguage`;
export const URL_TERM = `${SCHEMA}url`;
export const CONFORMS_TO = `${DCT}conformsTo`;
export const LICENSE = `${SCHEMA}license`;
export const TEST_SUITE = `${TEST}TestSuite`;
export const TEST_INSTANCE = `${TEST}TestInstance`;
export const INSTANCE = `${TEST}instance`;
export const RUNS_ON = `${TEST}runsOn`;
export const RESOURCE = `${TEST}resource`;
export const DEFINITION = `${TEST}definition`;
export const ENGINE_VERSION = `${TEST}engineVersion`;

/**
 * A remote `@context` is never fetched (it would let a crate make the service call any URL,
 * and makes registration depend on w3id.org being up), so the terms of the RO-Crate 1.1
 * context and of the Workflow Testing RO-Crate terms that the parser reads come from here.
 */
const BUILT_IN_TERMS = new Map<string, string>([
  ['about', ABOUT],
  ['name', NAME],
  ['mentions', MENTIONS],
  ['mainEntity', MAIN_ENTITY],
  ['programmingLanguage', PROGRAMMING_LANGUAGE],
  ['url', URL_TERM],
  ['conformsTo', CONFORMS_TO],
  ['license', LICENSE],
  ['hasPart', `${SCHEMA}hasPart`],
  ['Dataset', `${SCHEMA}Dataset`],
  ['File', `${SCHEMA}MediaObject`],
  ['CreativeWork', `${SCHEMA}CreativeWork`],
  ['SoftwareSourceCode', `${SCHEMA}SoftwareSourceCode`],
  ['SoftwareApplication', `${SCHEMA}SoftwareApplication`],
  ['ComputerLanguage', `${SCHEMA}ComputerLanguage`],
  ['ComputationalWorkflow', COMPUTATIONAL_WORKFLOW],
  ['FormalParameter', `${BIOSCHEMAS}FormalParameter`],
  ['input', `${BIOSCHEMAS}input`],
  ['output', `${BIOSCHEMAS}output`],
  ['TestSuite', TEST_SUITE],
  ['TestInstance', TEST_INSTANCE],
  ['TestService', `${TEST}TestService`],
  ['TestDefinition', `${TEST}TestDefinition`],
  ['PlanemoEngine', `${TEST}PlanemoEngine`],
  ['instance', INSTANCE],
  ['runsOn', RUNS_ON],
  ['resource', RESOURCE],
  ['definition', DEFINITION],
  ['engineVersion', ENGINE_VERSION],
]);

const BUILT_IN_PREFIXES = new Map<string, string>([
  ['schema', SCHEMA],
  ['test', TEST],
  ['dct', DCT],
  ['bioschemas', BIOSCHEMAS],
]);

const DESCRIPTOR_IDS = ['ro-crate-metadata.json', './ro-crate-metadata.json', 'ro-crate-metadata.jsonld'];

/** Deeper nesting than this is not searched for embedded entities (a guard against pathological documents). */
const MAX_DEPTH = 64;

/** An entity of the crate's graph. */
export interface CrateEntity {
  id?: string;
  /** `@type` values as written, and expanded to IRIs. */
  rawTypes: string[];
  types: Set<string>;
  /** Property values by expanded property IRI; compact and full-IRI keys land in the same list. */
  props: Map<string, unknown[]>;
}

interface Context {
  terms: Map<string, string>;
  /** BUILT_IN_TERMS and the terms of the known services. */
  builtIns: ReadonlyMap<string, string>;
  vocab?: string;
}

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
    ...(options.services ?? []).map((service): [string, string] => [
      service.crateTerm,
      `${TEST}${service.crateTerm}`,
    ]),
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
  const serviceType = serviceTypeOf(runsOn);
  if (serviceType === null || !known.includes(serviceType)) {
    throw invalid(
      `a test instance uses an unknown service type: ${quote(runsOn)} (instance ${quote(id)}; known: ${known.join(', ')})`,
    );
  }
  const url = graph.refs(entity.props.get(URL_TERM))[0] ?? textOf(entity.props.get(URL_TERM));
  if (url === undefined) {
    throw invalid(`the test instance ${quote(id)} has no url`);
  }
  if (!isHttpUrl(url)) {
    throw invalid(`the test instance ${quote(id)} has a url that is not http(s): ${quote(url)}`);
  }
  // One test service row per (type, url): `https://ci.example.org/` and `https://ci.example.org` are one
  // service, and so are a service's web site and its API where the service says so.
  const resource = textOf(entity.props.get(RESOURCE));
  const target = canonicalTarget(services, serviceType, { url, resource: resource ?? '' });
  const instance: ParsedInstance = {
    id,
    serviceType,
    serviceUrl: target.url,
    resource: resource === undefined ? '' : target.resource,
  };
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

/**
 * The entities of a JSON-LD document, found in its `@graph` and embedded in property
 * values, with keys and types expanded through the document's inline context and the
 * built-in term table.
 */
export class CrateGraph {
  readonly byId = new Map<string, CrateEntity>();
  readonly entities: CrateEntity[] = [];
  private readonly embedded = new WeakMap<object, CrateEntity>();
  private readonly context: Context;

  constructor(
    /** The metadata document as it was given. */
    readonly document: object,
    builtIns: ReadonlyMap<string, string>,
  ) {
    this.context = readContext(
      Array.isArray(document) ? undefined : property(document, '@context'),
      builtIns,
    );
    const graph = Array.isArray(document) ? document : property(document, '@graph');
    const top: unknown[] = graph === undefined ? [document] : Array.isArray(graph) ? graph : [graph];
    for (const node of top) {
      if (isRecord(node)) {
        this.add(node, 0);
      }
    }
  }

  /** The entity a reference (`{"@id": …}`, a plain string, or an embedded node) points to. */
  resolve(ref: unknown): CrateEntity | undefined {
    if (typeof ref === 'string') {
      return this.byId.get(ref);
    }
    if (!isRecord(ref)) {
      return undefined;
    }
    const embedded = this.embedded.get(ref);
    if (embedded) {
      return embedded;
    }
    const id = idOf(ref);
    return id === undefined ? undefined : this.byId.get(id);
  }

  /**
   * The IRIs a property points to, written as `{"@id": …}` or as plain strings. A compact
   * term (`PlanemoEngine`, `test:TestSuite`) is expanded; a relative id (`#ci`) is kept.
   */
  refs(values: unknown[] | undefined): string[] {
    const ids: string[] = [];
    for (const value of values ?? []) {
      const id = idOf(value);
      if (id === undefined || id.trim() === '') {
        continue;
      }
      const isTerm =
        this.context.terms.has(id) || this.context.builtIns.has(id) || /^[A-Za-z][\w.-]*:(?!\/\/)/.test(id);
      ids.push(isTerm ? expand(id, this.context) : id.trim());
    }
    return ids;
  }

  private add(node: Record<string, unknown>, depth: number): CrateEntity {
    const id = typeof node['@id'] === 'string' ? node['@id'] : undefined;
    let entity = id === undefined ? undefined : this.byId.get(id);
    if (!entity) {
      entity = { id, rawTypes: [], types: new Set(), props: new Map() };
      this.entities.push(entity);
      if (id !== undefined) {
        this.byId.set(id, entity);
      }
    }
    this.embedded.set(node, entity);
    for (const [key, value] of Object.entries(node)) {
      if (key === '@type') {
        for (const type of asArray(value)) {
          if (typeof type === 'string') {
            entity.rawTypes.push(type);
            entity.types.add(expand(type, this.context));
          }
        }
      } else if (!key.startsWith('@')) {
        const iri = expand(key, this.context);
        const values = flattenValues(value);
        entity.props.set(iri, [...(entity.props.get(iri) ?? []), ...values]);
        for (const inner of values) {
          if (depth < MAX_DEPTH && isNodeObject(inner)) {
            this.add(inner, depth + 1);
          }
        }
      }
    }
    return entity;
  }
}

function readContext(context: unknown, builtIns: ReadonlyMap<string, string>): Context {
  const result: Context = { terms: new Map(), builtIns };
  for (const part of asArray(context)) {
    // Remote contexts (strings) are stood in for by the built-in table.
    if (!isRecord(part)) {
      continue;
    }
    for (const [term, definition] of Object.entries(part)) {
      if (term === '@vocab' && typeof definition === 'string') {
        result.vocab = definition;
      } else if (!term.startsWith('@')) {
        const iri = typeof definition === 'string' ? definition : idOf(definition);
        if (iri !== undefined) {
          result.terms.set(term, iri);
        }
      }
    }
  }
  return result;
}

/** A term, compact IRI or IRI to its canonical IRI. */
function expand(term: string, context: Context, depth = 0): string {
  const local = context.terms.get(term);
  if (local !== undefined && local !== term && depth < 8) {
    return expand(local, context, depth + 1);
  }
  const colon = term.indexOf(':');
  if (colon > 0) {
    const prefix = term.slice(0, colon);
    const suffix = term.slice(colon + 1);
    if (!suffix.startsWith('//')) {
      const base = context.terms.get(prefix) ?? BUILT_IN_PREFIXES.get(prefix);
      if (base !== undefined) {
        return canonical(base + suffix);
      }
    }
    return canonical(term);
  }
  const builtIn = context.builtIns.get(term);
  if (builtIn !== undefined) {
    return builtIn;
  }
  return context.vocab === undefined ? term : canonical(context.vocab + term);
}

/**
 * The IRIs the RO-Crate 1.1, 1.2 and 1.3 contexts give the Bioschemas terms, and the profile
 * URLs crates put in `@type`, by the term they name (see the RO-Crate 1.3 release notes).
 */
const BIOSCHEMAS_SPELLINGS: readonly [RegExp, string][] = [
  // 1.1: input/output as fragments of the type.
  [/^https?:\/\/bioschemas\.org\/ComputationalWorkflow#(input|output)$/, `${BIOSCHEMAS}$1`],
  // 1.2: properties under /properties/.
  [/^https?:\/\/bioschemas\.org\/properties\/(\w+)$/, `${BIOSCHEMAS}$1`],
  // Profile and type pages, e.g. /types/ComputationalWorkflow/1.0-RELEASE, /profiles/…/1.0-RELEASE.
  [/^https?:\/\/bioschemas\.org\/(?:types|profiles)\/(\w+)(?:\/[\w.-]*)?$/, `${BIOSCHEMAS}$1`],
  // 1.3: /terms/; 1.1 and 1.2: types at the root.
  [/^https?:\/\/bioschemas\.org\/(?:terms\/)?(\w+)$/, `${BIOSCHEMAS}$1`],
];

/**
 * schema.org and w3id.org IRIs are written with either scheme in the wild, and Bioschemas IRIs
 * differ between RO-Crate contexts; one spelling each.
 */
function canonical(iri: string): string {
  const folded = iri
    .replace(/^https?:\/\/schema\.org\//, SCHEMA)
    .replace(/^https?:\/\/w3id\.org\//, 'https://w3id.org/')
    .replace(/^https?:\/\/purl\.org\/dc\/terms\//, DCT);
  if (!/^https?:\/\/bioschemas\.org\//.test(folded)) {
    return folded;
  }
  for (const [spelling, replacement] of BIOSCHEMAS_SPELLINGS) {
    if (spelling.test(folded)) {
      return folded.replace(spelling, replacement);
    }
  }
  return folded;
}

function flattenValues(value: unknown): unknown[] {
  const values: unknown[] = [];
  for (const item of asArray(value)) {
    if (isRecord(item) && ('@list' in item || '@set' in item)) {
      values.push(...asArray(item['@list'] ?? item['@set']));
    } else if (item !== null && item !== undefined) {
      values.push(item);
    }
  }
  return values;
}

/** An object describing an entity, as opposed to a bare reference or a value object. */
function isNodeObject(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value) || '@value' in value) {
    return false;
  }
  return Object.keys(value).some((key) => key !== '@id');
}

function idOf(value: unknown): string | undefined {
  if (typeof value === 'string') {
    return value;
  }
  if (isRecord(value) && typeof value['@id'] === 'string') {
    return value['@id'];
  }
  return undefined;
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

function property(object: object, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(object, key)
    ? (object as Record<string, unknown>)[key]
    : undefined;
}

function asArray(value: unknown): unknown[] {
  if (value === undefined || value === null) {
    return [];
  }
  return Array.isArray(value) ? value : [value];
}

function quote(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function invalid(detail: string): DomainError {
  return new DomainError('invalid_input', detail);
}
