import { ApiProperty } from '@nestjs/swagger';
import type { TestInstanceEntity, TestSuiteEntity } from '../entities/registry.entities.js';
import type { TestServiceEntity } from '../entities/test-service.entity.js';
import { absoluteLinkOf } from '../../common/base-url.js';
import { loaded } from './loaded.js';
import { BUILD_STATUSES, FAILURE_CLASSES, type FailureClass } from '../build-status.js';
import type { LastChecks } from '../workflow-status-source.js';

export class TestServiceDto {
  // The enum (the registered CI services) is filled in by ServiceTypeSchema.
  @ApiProperty({
    type: String,
    description: 'The CI service type, one of the services this deployment knows',
  })
  type!: string;

  @ApiProperty({ format: 'uri', example: 'https://ci.example.org', description: 'The API base URL' })
  url!: string;

  @ApiProperty({ format: 'uuid', example: '0b3c3a2e-8f6d-4e0f-a0a1-6c3f3f6b2d11' })
  uuid!: string;
}

export const INSTANCE_ORIGINS = ['crate', 'api'] as const;
export type InstanceOrigin = (typeof INSTANCE_ORIGINS)[number];

export class LastCheckDto {
  @ApiProperty({
    format: 'date-time',
    example: '2026-11-23T08:00:00.000Z',
    description: 'When the check was made',
  })
  at!: string;

  @ApiProperty({ example: false, description: 'Whether the CI service answered as its API documents' })
  ok!: boolean;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'workflow acme/wf/none.yml not found (404)',
    description:
      "What went wrong, in the CI service's words (status and message, never a credential); null when `ok`",
  })
  error!: string | null;
}

export class TestInstanceDto {
  @ApiProperty({ format: 'uuid', example: '7a1f7f3e-2b1c-4d7e-9a4b-1c2d3e4f5a6b' })
  uuid!: string;

  @ApiProperty({ type: String, nullable: true, example: 'test1_1' })
  name!: string | null;

  @ApiProperty({
    example: false,
    description:
      "Whether this service runs the tests itself (LifeMonitor's meaning): always false here, for the crate's instances and for those added through the API",
  })
  managed!: boolean;

  @ApiProperty({ example: 'repo/1002447', description: 'Where the tests live on the service' })
  resource!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '#test1_1',
    description:
      "The instance's @id in the crate; null for an instance added through the API (POST /suites/{suite_uuid}/instances)",
  })
  roc_instance!: string | null;

  @ApiProperty({
    enum: INSTANCE_ORIGINS,
    example: 'crate',
    description:
      'Where the instance came from: `crate` (declared by the crate at registration; it stays so when changed ' +
      'through PUT /instances/{uuid}) or `api` (added with POST /suites/{suite_uuid}/instances)',
  })
  origin!: InstanceOrigin;

  @ApiProperty({ type: TestServiceDto })
  service!: TestServiceDto;

  @ApiProperty({
    type: LastCheckDto,
    nullable: true,
    description: "The last check of the instance's builds on its CI service; null before the first",
  })
  last_check!: LastCheckDto | null;
}

export class TestEngineDto {
  @ApiProperty({ type: String, nullable: true, example: 'planemo' })
  type!: string | null;

  @ApiProperty({ type: String, nullable: true, example: '>=0.70' })
  version!: string | null;
}

export class TestDefinitionDto {
  @ApiProperty({ type: TestEngineDto })
  test_engine!: TestEngineDto;

  @ApiProperty({ type: String, nullable: true, example: 'test/test1/sort-and-change-case-test.yml' })
  path!: string | null;
}

export class TestSuiteDto {
  @ApiProperty({ format: 'uuid', example: '5c9d2b7e-1a3f-4c8e-b2d1-9e8f7a6b5c4d' })
  uuid!: string;

  @ApiProperty({ example: '#test1', description: "The suite's @id in the crate" })
  roc_suite!: string;

  @ApiProperty({ type: String, nullable: true, example: 'test1' })
  name!: string | null;

  @ApiProperty({ type: TestDefinitionDto })
  definition!: TestDefinitionDto;

  @ApiProperty({ type: TestInstanceDto, isArray: true })
  instances!: TestInstanceDto[];
}

export class TestSuiteListDto {
  @ApiProperty({ type: TestSuiteDto, isArray: true })
  items!: TestSuiteDto[];
}

export class TestInstanceListDto {
  @ApiProperty({ type: TestInstanceDto, isArray: true })
  items!: TestInstanceDto[];
}

export class BuildLinksDto {
  @ApiProperty({ format: 'uri', example: 'https://ci.example.org/job/life_monitor/8765/' })
  origin!: string;
}

export class BuildFailureDto {
  @ApiProperty({
    enum: FAILURE_CLASSES,
    example: 'infrastructure',
    description:
      '`infrastructure`: the runner or CI service failed (cancelled, lost, timed out, no space, a download failed); ' +
      '`test`: a test step failed; `unknown`: neither the CI fields nor the log tell',
  })
  class!: FailureClass;

  @ApiProperty({ example: 'no space left on the runner', description: 'One line' })
  reason!: string;

  @ApiProperty({
    type: String,
    isArray: true,
    example: ['##[error]No space left on device : /home/runner/work/_temp'],
    description:
      'The log lines (colours and timestamps dropped) or the CI field (`conclusion: cancelled`) that decided',
  })
  evidence!: string[];
}

export class BuildDto {
  @ApiProperty({ example: '8765' })
  build_id!: string;

  @ApiProperty({ format: 'uuid', example: '5c9d2b7e-1a3f-4c8e-b2d1-9e8f7a6b5c4d' })
  suite_uuid!: string;

  @ApiProperty({ type: TestInstanceDto })
  instance!: TestInstanceDto;

  @ApiProperty({ enum: BUILD_STATUSES, example: 'passed' })
  status!: string;

  @ApiProperty({ example: '1700000000', description: 'Start of the build, decimal seconds since the epoch' })
  timestamp!: string;

  @ApiProperty({ example: 312, description: 'Whole seconds (0 while running)' })
  duration!: number;

  @ApiProperty({ type: BuildLinksDto })
  links!: BuildLinksDto;

  @ApiProperty({
    type: BuildFailureDto,
    required: false,
    description: 'On failing builds (`failed`, `error`, `aborted`) only: why it failed (API.md 16)',
  })
  failure?: BuildFailureDto;
}

/** A test instance as a reply shows it: with its last check (API.md 11). */
export interface InstanceView {
  /** With its `service` loaded (and its `suite`, for a build reply). */
  instance: TestInstanceEntity;
  lastChecks: LastChecks;
}

/** Test suites as a reply shows them: with the last checks of their instances. */
export interface SuitesView {
  /** With their `instances` and their `service` loaded. */
  suites: TestSuiteEntity[];
  lastChecks: LastChecks;
}

/** A test suite as a reply shows it: with the last checks of its instances. */
export interface SuiteView {
  /** With its `instances` and their `service` loaded. */
  suite: TestSuiteEntity;
  lastChecks: LastChecks;
}

/** What a build reply is made of; both a stored build and a status summary's latest build have it. */
export interface BuildFields {
  buildId: string;
  status: string;
  startedAt: Date;
  durationSeconds: number;
  url: string;
  /** On failing builds (API.md 16). */
  failure?: { class: FailureClass; reason: string; evidence: readonly string[] };
}

/**
 * What replies show of an instance: a whole entity, or a list's narrow read of it. Its suite and
 * service, typed optional as on the entity, must be loaded where a reply shows them.
 */
export type InstanceFields = Pick<
  TestInstanceEntity,
  'id' | 'uuid' | 'name' | 'managed' | 'resource' | 'rocInstance'
> & {
  suite?: Pick<TestSuiteEntity, 'uuid'>;
  service?: Pick<TestServiceEntity, 'type' | 'url' | 'uuid'>;
};

export function toServiceResponse(service: Pick<TestServiceEntity, 'type' | 'url' | 'uuid'>): TestServiceDto {
  return { type: service.type, url: service.url, uuid: service.uuid };
}

/** The instance must come with its `service` loaded; `lastChecks` holds its last check, if any. */
export function toInstanceResponse(instance: InstanceFields, lastChecks: LastChecks): TestInstanceDto {
  const check = lastChecks.get(instance.id);
  return {
    uuid: instance.uuid,
    name: instance.name,
    managed: instance.managed,
    resource: instance.resource,
    roc_instance: instance.rocInstance,
    origin: instance.rocInstance === null ? 'api' : 'crate',
    service: toServiceResponse(loaded(instance.service, 'instance.service')),
    last_check: check ? { at: check.at.toISOString(), ok: check.ok, error: check.error } : null,
  };
}

/** The suite must come with its `instances` and their `service` loaded. */
export function toSuiteResponse(suite: TestSuiteEntity, lastChecks: LastChecks): TestSuiteDto {
  return {
    uuid: suite.uuid,
    roc_suite: suite.rocSuite,
    name: suite.name,
    definition: {
      test_engine: { type: suite.engineType, version: suite.engineVersion },
      path: suite.definitionPath,
    },
    instances: [...loaded(suite.instances, 'suite.instances')]
      .sort((a, b) => a.id - b.id)
      .map((instance) => toInstanceResponse(instance, lastChecks)),
  };
}

/**
 * The instance must come with its `service` and `suite` loaded. `baseUrl` makes a build link
 * stored as a path of this service (a managed run's) absolute, as every link of a reply.
 */
export function toBuildResponse(
  build: BuildFields,
  instance: InstanceFields,
  lastChecks: LastChecks,
  baseUrl: string,
): BuildDto {
  return {
    build_id: build.buildId,
    suite_uuid: loaded(instance.suite, 'instance.suite').uuid,
    instance: toInstanceResponse(instance, lastChecks),
    status: build.status,
    timestamp: String(Math.floor(build.startedAt.getTime() / 1000)),
    duration: build.durationSeconds,
    links: { origin: absoluteLinkOf(build.url, baseUrl) },
    ...(build.failure && {
      failure: {
        class: build.failure.class,
        reason: build.failure.reason,
        evidence: [...build.failure.evidence],
      },
    }),
  };
}
