import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { absoluteLinkOf } from '../../common/base-url.js';
import { EXAMPLE } from '../../common/openapi-examples.js';
import { latestVersionOf } from '../../workflows/index.js';
import { WORKFLOW_LANGUAGES, type WorkflowLanguage } from '../../crates/index.js';
import { toolPathInUrl } from '../tool-files.js';
import {
  TOOL_CLASS,
  type ListedFile,
  type ToolVersionView,
  type ToolView,
  type WrappedFile,
} from '../trs.service.js';

/**
 * The reply shapes of GA4GH TRS 2.1.0 (its `components.schemas`, API.md 10.2), member for member
 * as the service fills them; test/e2e/trs.e2e-spec.ts validates every reply against the TRS
 * document itself.
 */

const TOOL_EXAMPLE_ID = EXAMPLE.workflowUuid;
const TOOL_EXAMPLE_URL = `http://localhost:3000/ga4gh/trs/v2/tools/${TOOL_EXAMPLE_ID}`;

export class TrsErrorDto {
  @ApiProperty({ type: Number, format: 'int32', example: 404, description: 'The HTTP status' })
  code!: number;

  @ApiProperty({ example: `No tool ${TOOL_EXAMPLE_ID}` })
  message!: string;
}

export class TrsServiceTypeDto {
  @ApiProperty({ example: 'org.ga4gh' })
  group!: string;

  @ApiProperty({ example: 'trs' })
  artifact!: string;

  @ApiProperty({ example: '2.1.0' })
  version!: string;
}

export class TrsOrganizationDto {
  @ApiProperty({ example: 'localhost:3000', description: 'The host serving this registry' })
  name!: string;

  @ApiProperty({ format: 'uri', example: 'http://localhost:3000' })
  url!: string;
}

/** GA4GH service-info 1.0.0's Service, as TRS 2.1.0 refers to it. */
export class TrsServiceInfoDto {
  @ApiProperty({
    example: 'localhost:3000/ga4gh/trs/v2',
    description: 'This registry, by the address it answers at',
  })
  id!: string;

  @ApiProperty({ example: 'Workflow registry (GA4GH TRS)' })
  name!: string;

  @ApiProperty({ type: TrsServiceTypeDto })
  type!: TrsServiceTypeDto;

  @ApiProperty({ example: 'Read-only GA4GH Tool Registry Service over the workflows registered here' })
  description!: string;

  @ApiProperty({ type: TrsOrganizationDto })
  organization!: TrsOrganizationDto;

  @ApiProperty({ format: 'uri', example: 'http://localhost:3000/docs' })
  documentationUrl!: string;

  @ApiProperty({ example: '0.1.0', description: 'The version of this service' })
  version!: string;
}

export class TrsToolClassDto {
  @ApiProperty({ example: 'Workflow' })
  id!: string;

  @ApiProperty({ example: 'Workflow' })
  name!: string;

  @ApiProperty({ example: 'A workflow registered as a Workflow Testing RO-Crate' })
  description!: string;
}

export class TrsChecksumDto {
  @ApiProperty({ example: '2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae' })
  checksum!: string;

  @ApiProperty({
    example: 'sha-256',
    description: 'A hash name of the GA4GH Checksum Hash Algorithm Registry',
  })
  type!: string;
}

export class TrsToolVersionDto {
  @ApiProperty({ example: '1.0', description: "The version's name in this registry" })
  id!: string;

  @ApiProperty({ format: 'uri', example: `${TOOL_EXAMPLE_URL}/versions/1.0` })
  url!: string;

  @ApiProperty({ example: 'sort-and-change-case', description: "The version's name (the workflow's, then)" })
  name!: string;

  @ApiProperty({
    enum: WORKFLOW_LANGUAGES,
    isArray: true,
    example: ['GALAXY'],
    description: "The main workflow's language; empty when the crate names none of these",
  })
  descriptor_type!: WorkflowLanguage[];

  @ApiProperty({
    example: true,
    description:
      "Every test instance's latest finished build of this version passed and started within " +
      'STALE_AFTER_DAYS (default 30 days); false without instances or while one has no finished build',
  })
  verified!: boolean;

  @ApiProperty({
    type: String,
    isArray: true,
    example: [
      'https://lifemonitor.example.org/status/1d8a9c84-8b1c-4bfa-a9c5-52b6b1b9cd67?version=1.0',
      'https://github.com/crs4/example/actions/runs/8765',
    ],
    description:
      "The version's status page (where `verified` can be checked), then the CI runs behind it: each " +
      "instance's latest finished build",
  })
  verified_source!: string[];

  @ApiProperty({ example: false, description: 'Crates carry no container files' })
  containerfile!: boolean;

  @ApiProperty({ example: false, description: 'Versions are registered as given; none is signed' })
  signed!: boolean;

  @ApiProperty({ example: false, description: 'A registered version can be deleted and registered again' })
  is_production!: boolean;

  @ApiProperty({ type: Object, isArray: true, example: [], description: 'Always empty' })
  images!: object[];
}

export class TrsToolDto {
  @ApiProperty({ format: 'uri', example: TOOL_EXAMPLE_URL })
  url!: string;

  @ApiProperty({ example: TOOL_EXAMPLE_ID, description: "The workflow's uuid" })
  id!: string;

  @ApiProperty({
    example: 'alice',
    description: "The owner's username",
  })
  organization!: string;

  @ApiProperty({ example: 'sort-and-change-case', description: "The workflow's name" })
  name!: string;

  @ApiProperty({ type: TrsToolClassDto })
  toolclass!: TrsToolClassDto;

  @ApiProperty({ example: false })
  has_checker!: boolean;

  @ApiProperty({ type: TrsToolVersionDto, isArray: true, description: 'Older first' })
  versions!: TrsToolVersionDto[];
}

export class TrsFileWrapperDto {
  @ApiPropertyOptional({
    example: '{"a_galaxy_workflow": "true"}',
    description:
      'The file as UTF-8 text; absent for a file that is not text, or larger than 1 MiB (then `url` has it)',
  })
  content?: string;

  @ApiProperty({ type: TrsChecksumDto, isArray: true })
  checksum!: TrsChecksumDto[];

  @ApiProperty({
    format: 'uri',
    example: `${TOOL_EXAMPLE_URL}/versions/1.0/PLAIN_GALAXY/descriptor/sort-and-change-case.ga`,
    description: 'The bare file',
  })
  url!: string;
}

export class TrsToolFileDto {
  @ApiProperty({
    example: 'sort-and-change-case.ga',
    description: "Relative to the main workflow's folder (`../` for a file above it)",
  })
  path!: string;

  @ApiProperty({
    enum: ['TEST_FILE', 'PRIMARY_DESCRIPTOR', 'SECONDARY_DESCRIPTOR', 'OTHER'],
    example: 'PRIMARY_DESCRIPTOR',
  })
  file_type!: string;

  @ApiPropertyOptional({
    type: TrsChecksumDto,
    description:
      'Absent for a file the archive cannot give back (encrypted, or compressed otherwise than by deflate)',
  })
  checksum?: TrsChecksumDto;
}

/** Where a request's replies point: the service's base URL and the TRS prefix it came in by. */
export interface TrsRoot {
  /** `http://host:3000/ga4gh/trs/v2` (or `…/api/ga4gh/v2`). */
  url: string;
  /** `host:3000`, the origin's host. */
  host: string;
  base: string;
}

export const TOOL_CLASS_RESPONSE: TrsToolClassDto = {
  id: TOOL_CLASS,
  name: TOOL_CLASS,
  description: 'A workflow registered as a Workflow Testing RO-Crate',
};

export function toServiceInfoResponse(root: TrsRoot, version: string): TrsServiceInfoDto {
  return {
    id: `${root.host}${new URL(root.url).pathname}`,
    name: 'Workflow registry (GA4GH TRS)',
    type: { group: 'org.ga4gh', artifact: 'trs', version: '2.1.0' },
    description: 'Read-only GA4GH Tool Registry Service over the workflows registered here',
    organization: { name: root.host, url: root.base },
    documentationUrl: `${root.base}/docs`,
    version,
  };
}

export function toolUrlOf(root: Pick<TrsRoot, 'url'>, id: string): string {
  return `${root.url}/tools/${encodeURIComponent(id)}`;
}

function versionUrlOf(root: Pick<TrsRoot, 'url'>, id: string, version: string): string {
  return `${toolUrlOf(root, id)}/versions/${encodeURIComponent(version)}`;
}

/**
 * Where a version's file is served bare (`PLAIN_{type}/descriptor/{path}`, API.md 10.2): the `url`
 * of its file wrapper, and what a WES endpoint fetches (API.md 17).
 */
export function plainDescriptorUrlOf(
  root: Pick<TrsRoot, 'url'>,
  id: string,
  version: string,
  file: { language: WorkflowLanguage; urlPath: string },
): string {
  return `${versionUrlOf(root, id, version)}/PLAIN_${file.language}/descriptor/${toolPathInUrl(file.urlPath)}`;
}

export function toToolVersionResponse(
  root: TrsRoot,
  tool: ToolView,
  version: ToolVersionView,
): TrsToolVersionDto {
  const statusPage = `${root.base}/status/${encodeURIComponent(tool.workflow.uuid)}?version=${encodeURIComponent(version.version.version)}`;
  return {
    id: version.version.version,
    url: versionUrlOf(root, tool.workflow.uuid, version.version.version),
    name: version.version.name,
    descriptor_type: version.version.language === null ? [] : [version.version.language],
    verified: version.verified,
    verified_source: [
      statusPage,
      ...version.finished.flatMap((build) =>
        build === undefined ? [] : [absoluteLinkOf(build.url, root.base)],
      ),
    ],
    containerfile: false,
    signed: false,
    is_production: false,
    images: [],
  };
}

export function toToolResponse(root: TrsRoot, tool: ToolView): TrsToolDto {
  return {
    url: toolUrlOf(root, tool.workflow.uuid),
    id: tool.workflow.uuid,
    organization: tool.organization,
    name: latestVersionOf(tool.workflow).name,
    toolclass: TOOL_CLASS_RESPONSE,
    has_checker: false,
    versions: tool.versions.map((version) => toToolVersionResponse(root, tool, version)),
  };
}

export function toFileWrapperResponse(
  root: TrsRoot,
  id: string,
  version: string,
  file: WrappedFile,
): TrsFileWrapperDto {
  const wrapper: TrsFileWrapperDto = {
    checksum: [{ checksum: file.sha256, type: 'sha-256' }],
    url: plainDescriptorUrlOf(root, id, version, file),
  };
  if (file.content !== undefined) {
    wrapper.content = file.content;
  }
  return wrapper;
}

export function toToolFileResponse(file: ListedFile): TrsToolFileDto {
  const listed: TrsToolFileDto = { path: file.toolPath, file_type: file.fileType };
  if (file.sha256 !== undefined) {
    listed.checksum = { checksum: file.sha256, type: 'sha-256' };
  }
  return listed;
}
