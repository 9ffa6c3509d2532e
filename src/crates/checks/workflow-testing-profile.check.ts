import { Injectable } from '@nestjs/common';
import { isRecord } from '../../common/is-record.js';
import { rootOf } from '../ro-crate-parser.js';
import {
  COMPUTATIONAL_WORKFLOW,
  CONFORMS_TO,
  DEFINITION,
  ENGINE_VERSION,
  INSTANCE,
  MAIN_ENTITY,
  MENTIONS,
  RESOURCE,
  RUNS_ON,
  SCHEMA,
  TEST,
  TEST_INSTANCE,
  TEST_SUITE,
  URL_TERM,
  type CrateEntity,
  type CrateGraph,
} from '../crate-graph.js';
import {
  RegisterIssueCheck,
  type CheckedCrate,
  type IssueCheck,
  type IssueFinding,
  type IssueType,
} from './issue-check.js';

const TEST_SERVICE = `${TEST}TestService`;
const TEST_DEFINITION = `${TEST}TestDefinition`;
const MEDIA_OBJECT = `${SCHEMA}MediaObject`;
const SOFTWARE_SOURCE_CODE = `${SCHEMA}SoftwareSourceCode`;
const SOFTWARE_APPLICATION = `${SCHEMA}SoftwareApplication`;
const PROFILE_SERVICES = ['GithubService', 'TravisService', 'JenkinsService'].map((term) => `${TEST}${term}`);
const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';

/**
 * One rule of the Workflow Testing RO-Crate profile, as crs4/rocrate-validator checks it: a
 * property shape of `rocrate_validator/profiles/workflow-testing-ro-crate/` (must/ and should/),
 * its name, its description and its message as the shape has them.
 */
interface ProfileRule {
  type: IssueType;
  /** The shape's sh:message: the start of every issue of this rule. */
  message: string;
  /** What breaks the rule in the crate, one text per entity (`#test1_1 has no resource`). */
  broken(graph: CrateGraph, root: CrateEntity | undefined): string[];
}

function rule(
  local: string,
  shapeName: string,
  level: 'MUST' | 'SHOULD',
  /** The shape's sh:description, which is its sh:message too in every shape of the profile. */
  message: string,
  broken: ProfileRule['broken'],
): ProfileRule {
  return {
    type: {
      id: `wftest.${local}`,
      name: `Workflow Testing RO-Crate: ${shapeName}`,
      description: `${message} (a ${level} of the Workflow Testing RO-Crate profile, as crs4/rocrate-validator checks it).`,
      // A MUST broken is an error, a SHOULD a warning (API.md 12).
      severity: level === 'MUST' ? 'error' : 'warning',
      labels: ['metadata', 'workflow-testing-ro-crate'],
    },
    message,
    broken,
  };
}

/** The rules in the order of the profile's files: must/1_test_suite … must/3_test_definition, should/. */
export const PROFILE_RULES: readonly ProfileRule[] = [
  rule(
    'TestSuiteMentionedByRoot',
    'TestSuite MUST be referenced via mentions from root',
    'MUST',
    'The TestSuite MUST be referenced from the Root Data Entity via mentions',
    (graph, root) => {
      const mentioned = new Set(referenced(graph, root, MENTIONS));
      return typed(graph, TEST_SUITE)
        .filter((suite) => !mentioned.has(suite))
        .map((suite) => `${name(suite)} is not mentioned by the root data entity`);
    },
  ),
  rule(
    'TestSuiteInstanceOrDefinition',
    'TestSuite instance or definition',
    'MUST',
    'The TestSuite MUST refer to a TestInstance or TestDefinition',
    (graph) =>
      typed(graph, TEST_SUITE)
        .filter(
          (suite) =>
            !allOfClass(graph, suite, INSTANCE, [TEST_INSTANCE]) &&
            !allOfClass(graph, suite, DEFINITION, [TEST_DEFINITION]),
        )
        .map((suite) => `${name(suite)} ${refersTo(graph, suite, [INSTANCE, DEFINITION])}`),
  ),
  rule(
    'RootDataEntityMentions',
    'Root Data Entity mentions',
    'MUST',
    'The Root Data Entity MUST refer to one or more test suites via mentions',
    (graph, root) => {
      if (!root) {
        return [];
      }
      return classProblems(
        graph,
        root.props.get(MENTIONS),
        [TEST_SUITE],
        'the root data entity mentions nothing',
        (value) => `the root data entity mentions ${value}, which is not a TestSuite`,
      );
    },
  ),
  rule(
    'TestInstanceRunsOn',
    'TestInstance runsOn',
    'MUST',
    'The TestInstance MUST refer to a TestService via runsOn',
    (graph) =>
      typed(graph, TEST_INSTANCE).flatMap((instance) => {
        const values = instance.props.get(RUNS_ON);
        const problems = classProblems(
          graph,
          values,
          [TEST_SERVICE],
          `${name(instance)} has no runsOn`,
          (value) => `${name(instance)} runs on ${value}, which the crate does not describe as a TestService`,
        );
        if (problems.length > 0 || graph.refs(values).some((iri) => PROFILE_SERVICES.includes(iri))) {
          return problems;
        }
        return [`${name(instance)} runs on none of GithubService, TravisService and JenkinsService`];
      }),
  ),
  rule(
    'TestInstanceUrl',
    'TestInstance url',
    'MUST',
    'The TestInstance MUST refer to the test service base URL via url',
    (graph) =>
      typed(graph, TEST_INSTANCE).flatMap((instance) =>
        textProblems(instance, URL_TERM, 'url', (url) =>
          url.startsWith('http') ? undefined : `the url of ${name(instance)} does not start with http`,
        ),
      ),
  ),
  rule(
    'TestInstanceResource',
    'TestInstance resource',
    'MUST',
    'The TestInstance MUST refer to the relative URL of the test project via resource',
    (graph) =>
      typed(graph, TEST_INSTANCE).flatMap((instance) => textProblems(instance, RESOURCE, 'resource')),
  ),
  rule(
    'TestDefinitionType',
    'TestDefinition type',
    'MUST',
    'The TestDefinition MUST have types TestDefinition and File',
    (graph) =>
      typed(graph, TEST_DEFINITION)
        .filter((definition) => !definition.types.has(MEDIA_OBJECT))
        .map((definition) => `${name(definition)} is not a File`),
  ),
  rule(
    'TestDefinitionConformsTo',
    'TestDefinition conformsTo',
    'MUST',
    'The TestDefinition MUST refer to the test engine it is written for via conformsTo',
    (graph) =>
      typed(graph, TEST_DEFINITION).flatMap((definition) =>
        classProblems(
          graph,
          definition.props.get(CONFORMS_TO),
          [SOFTWARE_APPLICATION],
          `${name(definition)} has no conformsTo`,
          (value) =>
            `${name(definition)} conforms to ${value}, which the crate does not describe as a SoftwareApplication`,
        ),
      ),
  ),
  rule(
    'TestDefinitionEngineVersion',
    'TestDefinition engineVersion',
    'MUST',
    'The TestDefinition MUST refer to the test engine version via engineVersion',
    (graph) =>
      typed(graph, TEST_DEFINITION).flatMap((definition) =>
        textProblems(definition, ENGINE_VERSION, 'engineVersion'),
      ),
  ),
  rule(
    'TestSuiteMainEntity',
    'TestSuite mainEntity',
    'SHOULD',
    'The TestSuite SHOULD refer to the tested workflow via mainEntity',
    (graph) =>
      typed(graph, TEST_SUITE).flatMap((suite) =>
        classProblems(
          graph,
          suite.props.get(MAIN_ENTITY),
          [MEDIA_OBJECT, SOFTWARE_SOURCE_CODE, COMPUTATIONAL_WORKFLOW],
          `${name(suite)} has no mainEntity`,
          (value) =>
            `the mainEntity of ${name(suite)}, ${value}, is not a workflow (File, SoftwareSourceCode and ComputationalWorkflow)`,
        ),
      ),
  ),
];

/** Every rule the crate breaks, with what breaks it: the issues of the profile. */
export function profileFindings(graph: CrateGraph): IssueFinding[] {
  const root = rootOf(graph);
  return PROFILE_RULES.flatMap((profileRule) => {
    const broken = profileRule.broken(graph, root);
    return broken.length === 0
      ? []
      : [{ type: profileRule.type, detail: `${profileRule.message}: ${broken.join(', ')}` }];
  });
}

/** Checks the crate against the Workflow Testing RO-Crate profile, one issue type per rule. */
@RegisterIssueCheck()
@Injectable()
export class WorkflowTestingProfileCheck implements IssueCheck {
  readonly types = PROFILE_RULES.map((profileRule) => profileRule.type);

  check(subject: CheckedCrate): IssueFinding[] {
    return profileFindings(subject.graph);
  }
}

/** Every entity of the graph with this type (SHACL's targetClass). */
function typed(graph: CrateGraph, type: string): CrateEntity[] {
  return graph.entities.filter((entity) => entity.types.has(type));
}

/** The entities `entity`'s `property` points to that the graph describes. */
function referenced(graph: CrateGraph, entity: CrateEntity | undefined, property: string): CrateEntity[] {
  return (entity?.props.get(property) ?? []).flatMap((value) => graph.resolve(value) ?? []);
}

/**
 * SHACL's minCount 1 and sh:class over a property's values: `none` when it has no value, else one
 * text (`notOne` of the value as shown) for each value that is not an entity of every one of `classes`.
 */
function classProblems(
  graph: CrateGraph,
  values: unknown[] | undefined,
  classes: string[],
  none: string,
  notOne: (value: string) => string,
): string[] {
  if (!values || values.length === 0) {
    return [none];
  }
  return values
    .filter((value) => !isOfClasses(graph.resolve(value), classes))
    .map((value) => notOne(shown(value)));
}

/** At least one value, each an entity with every one of `classes` (SHACL's minCount 1 and sh:class). */
function allOfClass(graph: CrateGraph, entity: CrateEntity, property: string, classes: string[]): boolean {
  const values = entity.props.get(property) ?? [];
  return values.length > 0 && values.every((value) => isOfClasses(graph.resolve(value), classes));
}

function isOfClasses(entity: CrateEntity | undefined, classes: string[]): boolean {
  return entity !== undefined && classes.every((type) => entity.types.has(type));
}

/** What an entity's properties point to, for a message: `refers to sort-and-change-case.ga (not a TestInstance)`. */
function refersTo(graph: CrateGraph, entity: CrateEntity, properties: string[]): string {
  const values = properties.flatMap((property) => entity.props.get(property) ?? []);
  if (values.length === 0) {
    return 'refers to neither';
  }
  return `refers only to ${values.map((value) => `${shown(value)}${graph.resolve(value) ? '' : ' (not described)'}`).join(', ')}`;
}

/**
 * What is wrong with a property that must have text values (SHACL's minCount 1 and datatype
 * xsd:string), and with each text by `judge` (which says what is wrong, or undefined).
 */
function textProblems(
  entity: CrateEntity,
  property: string,
  what: string,
  judge: (text: string) => string | undefined = () => undefined,
): string[] {
  const values = entity.props.get(property) ?? [];
  if (values.length === 0) {
    return [`${name(entity)} has no ${what}`];
  }
  return values.flatMap((value) => {
    const text = stringLiteral(value);
    const problem = text === undefined ? `the ${what} of ${name(entity)} is not a text` : judge(text);
    return problem === undefined ? [] : [problem];
  });
}

/** A JSON string, or a value object of type xsd:string (none, or that one): what xsd:string is in JSON-LD. */
function stringLiteral(value: unknown): string | undefined {
  if (typeof value === 'string') {
    return value;
  }
  if (
    isRecord(value) &&
    typeof value['@value'] === 'string' &&
    value['@language'] === undefined &&
    (value['@type'] === undefined || value['@type'] === XSD_STRING)
  ) {
    return value['@value'];
  }
  return undefined;
}

function name(entity: CrateEntity): string {
  return entity.id === undefined ? 'an entity without @id' : short(entity.id);
}

function shown(value: unknown): string {
  if (typeof value === 'string') {
    return short(value);
  }
  if (isRecord(value) && typeof value['@id'] === 'string') {
    return short(value['@id']);
  }
  return 'a value that is not a reference';
}

function short(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}
