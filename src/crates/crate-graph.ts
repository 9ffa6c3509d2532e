import { isRecord } from '../common/is-record.js';

/*
 * How a crate's metadata is read as JSON-LD: the vocabulary, the context and its terms, the
 * entities of the graph. ro-crate-parser.ts says what the registry takes from the graph; this
 * changes with JSON-LD and RO-Crate's contexts, that with what the registry stores.
 */

export const SCHEMA = 'http://schema.org/';
export const TEST = 'https://w3id.org/ro/terms/test#';
const DCT = 'http://purl.org/dc/terms/';
/**
 * Bioschemas terms in the spelling of the RO-Crate 1.3 context. The 1.1 and 1.2 contexts (and
 * crates written against them) name the same terms otherwise; `canonical` folds those into this one.
 */
const BIOSCHEMAS = 'https://bioschemas.org/terms/';
export const COMPUTATIONAL_WORKFLOW = `${BIOSCHEMAS}ComputationalWorkflow`;

export const ABOUT = `${SCHEMA}about`;
export const NAME = `${SCHEMA}name`;
export const MENTIONS = `${SCHEMA}mentions`;
export const MAIN_ENTITY = `${SCHEMA}mainEntity`;
export const PROGRAMMING_LANGUAGE = `${SCHEMA}programmingLanguage`;
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
export const BUILT_IN_TERMS = new Map<string, string>([
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

export function idOf(value: unknown): string | undefined {
  if (typeof value === 'string') {
    return value;
  }
  if (isRecord(value) && typeof value['@id'] === 'string') {
    return value['@id'];
  }
  return undefined;
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
