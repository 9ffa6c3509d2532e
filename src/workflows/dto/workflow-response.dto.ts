import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import type { AggregateTestStatus, LastChecks } from '../workflow-status-source.js';
import { ISSUE_SEVERITIES, type IssueSeverity } from '../../crates/index.js';
import type {
  TestInstanceEntity,
  VersionIssueEntity,
  WorkflowEntity,
  WorkflowVersionEntity,
} from '../entities/registry.entities.js';
import { loaded } from './loaded.js';
import { FollowDto, type FollowView, toFollowResponse } from '../../repositories/index.js';
import { BuildDto, toBuildResponse, type BuildFields, type InstanceFields } from './suite-response.dto.js';
import type { ListedWorkflow } from '../listed-workflows.reader.js';
import { latestVersionOf, versionsOf } from '../workflow-versions.js';
import type { RegistrySummary } from '../registry-directory.js';

export const UUID_EXAMPLE = '1d8a9c84-8b1c-4bfa-a9c5-52b6b1b9cd67';

/** The version of LifeMonitor's API (`specs/api.yaml`) whose operations this service answers (API.md 10.3). */
export const LIFEMONITOR_API_VERSION = '0.15.0';

export class SubmitterDto {
  @ApiProperty({ example: 7 })
  id!: number;

  @ApiProperty({ example: 'alice' })
  username!: string;
}

export class RoCrateLinksDto {
  @ApiProperty({
    format: 'uri',
    example: `http://localhost:3000/workflows/${UUID_EXAMPLE}/rocrate/1.0/download`,
  })
  download!: string;

  @ApiProperty({ format: 'uri', example: 'https://example.org/crates/sort-and-change-case.crate.zip' })
  external!: string;

  @ApiProperty({
    format: 'uri',
    example: `http://localhost:3000/workflows/${UUID_EXAMPLE}/rocrate/1.0/metadata`,
    description: "The crate's JSON-LD",
  })
  metadata!: string;

  @ApiPropertyOptional({
    format: 'uri',
    example: 'https://workflowhub.eu/workflows/293?version=1',
    description:
      "The registry's page of this version, for a workflow that came from a registry (API.md 10.1)",
  })
  origin?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', format: 'uri' },
    example: { workflowhub: 'https://workflowhub.eu/workflows/293?version=1' },
    description: "The same page by the registry's name, as LifeMonitor lists it",
  })
  registries?: Record<string, string>;
}

/** Where a version came from, for a workflow sent by a registry. */
export class VersionLinksDto {
  @ApiProperty({ format: 'uri', example: 'https://workflowhub.eu/workflows/293?version=1' })
  origin!: string;
}

/** A registry as workflow replies show it (API.md 10.1). */
export class RegistryRefDto {
  @ApiProperty({ format: 'uuid', example: '44abf3e6-5eab-41f7-a31a-7231ef323765' })
  uuid!: string;

  @ApiProperty({ example: 'workflowhub' })
  name!: string;

  @ApiProperty({ enum: ['seek', 'other'], example: 'seek' })
  type!: string;

  @ApiProperty({ format: 'uri', example: 'https://workflowhub.eu' })
  uri!: string;
}

/** `links` of a read, as LifeMonitor gives them. */
export class SelfLinkDto {
  @ApiProperty({ format: 'uri', example: `http://localhost:3000/workflows/${UUID_EXAMPLE}/versions` })
  self!: string;
}

export class RoCrateSourceDto {
  @ApiProperty({
    example: '1.0',
    description:
      "The ref registered: the link's /tree/{ref}, else the tag or branch named like the version, else the default branch",
  })
  ref!: string;

  @ApiProperty({
    example: '4f1c2b0e9d8a7c6b5a4f3e2d1c0b9a8f7e6d5c4b',
    description: 'The commit the ref named at registration',
  })
  commit!: string;
}

export class RoCrateDto {
  @ApiProperty({ type: RoCrateLinksDto })
  links!: RoCrateLinksDto;

  @ApiProperty({
    type: RoCrateSourceDto,
    nullable: true,
    description:
      'For a roc_link naming a GitHub repository (API.md 7.1): the ref and commit registered; null for other links',
  })
  source!: RoCrateSourceDto | null;

  @ApiPropertyOptional({
    type: Object,
    description: "The crate's JSON-LD (ro-crate-metadata.json), with ro_crate=true",
    example: { '@context': 'https://w3id.org/ro/crate/1.1/context', '@graph': [] },
  })
  metadata?: object;
}

/** `ro_crate` of a version in a list: its links alone. */
export class ListedRoCrateDto {
  @ApiProperty({ type: RoCrateLinksDto })
  links!: RoCrateLinksDto;
}

export class VersionIssueDto {
  @ApiProperty({
    example: 'best_practices.MissingLicense',
    description:
      "The issue type's identifier in GET /workflows/issues (what .lifemonitor.yaml's issues.exclude names)",
  })
  id!: string;

  @ApiProperty({ example: 'Missing LICENSE' })
  name!: string;

  @ApiProperty({
    example: 'The crate has no licence file at its root and its root dataset has no license.',
    description: 'What was found, and where in the crate',
  })
  description!: string;

  @ApiProperty({ enum: ISSUE_SEVERITIES, example: 'warning' })
  severity!: IssueSeverity;
}

export class VersionHeaderDto {
  @ApiProperty({ format: 'uuid', example: '0f4e1d2c-3b4a-5968-7a8b-9c0d1e2f3a4b' })
  uuid!: string;

  @ApiProperty({ example: '1.0' })
  version!: string;

  @ApiProperty({ example: true })
  is_latest!: boolean;

  @ApiProperty({ example: 'sort-and-change-case', description: "This version's name" })
  name!: string;

  @ApiPropertyOptional({
    type: VersionLinksDto,
    description: 'For a workflow that came from a registry: its page of this version',
  })
  links?: VersionLinksDto;

  @ApiProperty({ type: SubmitterDto })
  submitter!: SubmitterDto;

  @ApiProperty({ type: () => ListedRoCrateDto })
  ro_crate!: { links: RoCrateLinksDto };
}

// A version's reply is its header in a list with the whole crate description in place of its links.
export class VersionDto extends OmitType(VersionHeaderDto, ['ro_crate'] as const) {
  @ApiProperty({ type: RoCrateDto })
  ro_crate!: RoCrateDto;

  @ApiProperty({
    type: VersionIssueDto,
    isArray: true,
    description:
      'What the repository checks found when this version was registered (API.md 12): errors first, one per issue type',
  })
  issues!: VersionIssueDto[];
}

export class WorkflowMetaDto {
  @ApiProperty({ format: 'uri', example: 'http://localhost:3000' })
  base_url!: string;

  @ApiProperty({ example: `/workflows/${UUID_EXAMPLE}` })
  resource!: string;

  @ApiProperty({
    format: 'date-time',
    example: '2024-05-21T08:08:00.000Z',
    description: 'First registration',
  })
  created!: string;

  @ApiProperty({
    format: 'date-time',
    example: '2024-06-01T10:00:00.000Z',
    description: 'Registration of the latest version',
  })
  modified!: string;
}

export class WorkflowDto {
  @ApiProperty({ format: 'uuid', example: UUID_EXAMPLE })
  uuid!: string;

  @ApiProperty({ example: 'sort-and-change-case' })
  name!: string;

  @ApiProperty({ example: false, description: 'Readable by anybody, with or without a token' })
  public!: boolean;

  @ApiProperty({ type: WorkflowMetaDto })
  meta!: WorkflowMetaDto;

  @ApiPropertyOptional({ type: RegistryRefDto, description: 'For a workflow that came from a registry' })
  registry?: RegistryRefDto;

  @ApiProperty({ type: VersionDto })
  version!: VersionDto;

  @ApiPropertyOptional({
    type: VersionDto,
    isArray: true,
    description: 'The versions registered before this one, older first (with previous_versions=true)',
  })
  previous_versions?: VersionDto[];

  @ApiProperty({
    type: FollowDto,
    nullable: true,
    description:
      'For a workflow registered from a GitHub repository link: the tags and branches whose new versions it ' +
      'registers (API.md 12), and what following did lately; null for other workflows',
  })
  follow!: FollowDto | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 30,
    description:
      'Days between periodic re-runs of its tests (API.md 11); null: the service default (`RERUN_INTERVAL_DAYS`)',
  })
  rerun_interval_days!: number | null;
}

export class WorkflowRefDto {
  @ApiProperty({ format: 'uuid', example: UUID_EXAMPLE })
  uuid!: string;

  @ApiProperty({ example: 'sort-and-change-case' })
  name!: string;
}

export class VersionListWorkflowDto extends WorkflowRefDto {
  @ApiProperty({ type: SelfLinkDto })
  links!: SelfLinkDto;
}

export class VersionListMetaDto extends WorkflowMetaDto {
  @ApiProperty({
    example: LIFEMONITOR_API_VERSION,
    description: 'The LifeMonitor API version whose operations these are',
  })
  api_version!: string;
}

export class VersionListDto {
  @ApiProperty({ type: VersionListWorkflowDto })
  workflow!: VersionListWorkflowDto;

  @ApiProperty({ type: VersionDto, isArray: true, description: 'Older first' })
  versions!: VersionDto[];

  @ApiPropertyOptional({ type: RegistryRefDto, description: 'For a workflow that came from a registry' })
  registry?: RegistryRefDto;

  @ApiProperty({ type: SelfLinkDto })
  links!: SelfLinkDto;

  @ApiProperty({ type: VersionListMetaDto })
  meta!: VersionListMetaDto;
}

export class WorkflowStatusSummaryDto {
  @ApiProperty({
    enum: ['all_passing', 'some_passing', 'all_failing', 'not_available'],
    example: 'all_passing',
  })
  aggregate_test_status!: AggregateTestStatus;

  @ApiProperty({
    type: BuildDto,
    nullable: true,
    description: 'The most recent build over all instances of the latest version',
  })
  latest_build!: BuildDto | null;
}

export class WorkflowSummaryDto {
  @ApiProperty({ format: 'uuid', example: UUID_EXAMPLE })
  uuid!: string;

  @ApiProperty({ example: 'sort-and-change-case' })
  name!: string;

  @ApiProperty({ example: '1.1' })
  latest_version!: string;

  @ApiProperty({ type: String, isArray: true, example: ['1.0', '1.1'], description: 'Older first' })
  versions!: string[];

  @ApiProperty({ example: false, description: 'Readable by anybody, with or without a token' })
  public!: boolean;

  @ApiPropertyOptional({ type: WorkflowStatusSummaryDto, description: 'Left out with status=false' })
  status?: WorkflowStatusSummaryDto;
}

export class WorkflowListDto {
  @ApiProperty({ type: WorkflowSummaryDto, isArray: true })
  items!: WorkflowSummaryDto[];
}

/** A workflow as the reads show it: which version, and what was asked for besides. */
export interface WorkflowView {
  /** With its `versions` (each with its `submitter`) loaded. */
  workflow: WorkflowEntity;
  version: WorkflowVersionEntity;
  /** Versions registered before `version`, older first; only when asked for. */
  previous?: WorkflowVersionEntity[];
  /** The crate's JSON-LD; only when asked for. */
  metadata?: object;
  /** Its repository's following (API.md 12); null when it was not registered from one. */
  follow?: FollowView | null;
  /** The registry the workflow came from; null or absent for one registered by link. */
  registry?: RegistrySummary | null;
}

export function toVersionResponse(
  workflow: WorkflowEntity,
  version: WorkflowVersionEntity,
  baseUrl: string,
  registry: RegistrySummary | null = null,
): VersionDto {
  const header = toVersionHeader(workflow, version, baseUrl, registry);
  return {
    ...header,
    ro_crate: {
      ...header.ro_crate,
      source:
        version.sourceRef && version.sourceCommit
          ? { ref: version.sourceRef, commit: version.sourceCommit }
          : null,
    },
    issues: loaded(version.issues, 'version.issues').map(toIssueResponse),
  };
}

/** What every reply shows of a version (the status reply too): without the crate's source and issues. */
export function toVersionHeader(
  workflow: WorkflowEntity,
  version: WorkflowVersionEntity,
  baseUrl: string,
  registry: RegistrySummary | null,
): VersionHeaderDto {
  const submitter = loaded(version.submitter, 'version.submitter');
  const reply: VersionHeaderDto = {
    uuid: version.uuid,
    version: version.version,
    is_latest: latestVersionOf(workflow).id === version.id,
    name: version.name,
    submitter: { id: submitter.id, username: submitter.username },
    ro_crate: { links: crateLinksOf(workflow, version, baseUrl, registry) },
  };
  if (version.originLink !== null) {
    reply.links = { origin: version.originLink };
  }
  return reply;
}

export function crateLinksOf(
  workflow: WorkflowEntity,
  version: WorkflowVersionEntity,
  baseUrl: string,
  registry: RegistrySummary | null,
): RoCrateLinksDto {
  const crate = `${baseUrl}/workflows/${workflow.uuid}/rocrate/${encodeURIComponent(version.version)}`;
  const links: RoCrateLinksDto = {
    download: `${crate}/download`,
    external: version.rocLink,
    metadata: `${crate}/metadata`,
  };
  if (version.originLink !== null) {
    links.origin = version.originLink;
    if (registry !== null) {
      links.registries = { [registry.name]: version.originLink };
    }
  }
  return links;
}

export function toRegistryRef(registry: RegistrySummary): RegistryRefDto {
  return { uuid: registry.uuid, name: registry.name, type: registry.type, uri: registry.uri };
}

export function toIssueResponse(issue: VersionIssueEntity): VersionIssueDto {
  return { id: issue.issueType, name: issue.name, description: issue.description, severity: issue.severity };
}

export function toWorkflowResponse(view: WorkflowView, baseUrl: string): WorkflowDto {
  const { workflow, version } = view;
  const registry = view.registry ?? null;
  const latest = latestVersionOf(workflow);
  const shown = toVersionResponse(workflow, version, baseUrl, registry);
  if (view.metadata !== undefined) {
    shown.ro_crate.metadata = view.metadata;
  }
  const reply: WorkflowDto = {
    uuid: workflow.uuid,
    name: version.name,
    public: workflow.public,
    meta: {
      base_url: baseUrl,
      resource: `/workflows/${workflow.uuid}`,
      created: workflow.createdAt.toISOString(),
      modified: latest.registeredAt.toISOString(),
    },
    version: shown,
    follow: view.follow ? toFollowResponse(view.follow) : null,
    rerun_interval_days: workflow.rerunIntervalDays ?? null,
  };
  if (registry !== null) {
    reply.registry = toRegistryRef(registry);
  }
  if (view.previous !== undefined) {
    reply.previous_versions = view.previous.map((previous) =>
      toVersionResponse(workflow, previous, baseUrl, registry),
    );
  }
  return reply;
}

export function toVersionListResponse(
  { workflow, registry }: { workflow: WorkflowEntity; registry: RegistrySummary | null },
  baseUrl: string,
): VersionListDto {
  const resource = `/workflows/${workflow.uuid}/versions`;
  const latest = latestVersionOf(workflow);
  const reply: VersionListDto = {
    workflow: { uuid: workflow.uuid, name: latest.name, links: { self: `${baseUrl}${resource}` } },
    versions: versionsOf(workflow).map((version) => toVersionResponse(workflow, version, baseUrl, registry)),
    links: { self: `${baseUrl}${resource}` },
    meta: {
      api_version: LIFEMONITOR_API_VERSION,
      base_url: baseUrl,
      resource,
      created: workflow.createdAt.toISOString(),
      modified: latest.registeredAt.toISOString(),
    },
  };
  if (registry !== null) {
    reply.registry = toRegistryRef(registry);
  }
  return reply;
}

/** The status of a list item's latest version. */
export interface SummaryStatusView {
  aggregate: AggregateTestStatus;
  /** The instance comes with its service and suite loaded. */
  latestBuild: { build: BuildFields; instance: InstanceFields; lastChecks: LastChecks } | null;
}

/** A workflow in the caller's list, with the status of its latest version when asked for. */
export interface WorkflowSummaryView {
  /** With its versions loaded. */
  workflow: WorkflowEntity;
  status?: SummaryStatusView & {
    latestBuild: { build: BuildFields; instance: TestInstanceEntity; lastChecks: LastChecks } | null;
  };
}

/** A list's item as its narrow read gives it (ListedWorkflowsReader). */
export interface ListedSummaryView {
  workflow: Pick<ListedWorkflow, 'uuid' | 'public' | 'versions'>;
  status?: SummaryStatusView;
}

export function toWorkflowSummaryResponse(view: WorkflowSummaryView, baseUrl: string): WorkflowSummaryDto {
  return toListedSummaryResponse(
    {
      workflow: {
        uuid: view.workflow.uuid,
        public: view.workflow.public,
        versions: versionsOf(view.workflow),
      },
      status: view.status,
    },
    baseUrl,
  );
}

/** A list's item; its workflow's versions older first. `baseUrl` is the reply's, for its build's link. */
export function toListedSummaryResponse(view: ListedSummaryView, baseUrl: string): WorkflowSummaryDto {
  const versions = view.workflow.versions;
  const latest = versions.at(-1);
  if (latest === undefined) {
    throw new Error(`workflow ${view.workflow.uuid} has no version`);
  }
  const reply: WorkflowSummaryDto = {
    uuid: view.workflow.uuid,
    name: latest.name,
    latest_version: latest.version,
    versions: versions.map((version) => version.version),
    public: view.workflow.public,
  };
  if (view.status !== undefined) {
    const build = view.status.latestBuild;
    reply.status = {
      aggregate_test_status: view.status.aggregate,
      latest_build: build ? toBuildResponse(build.build, build.instance, build.lastChecks, baseUrl) : null,
    };
  }
  return reply;
}
