import { Controller, Get, Param, Query, Req, Res, StreamableFile, UseFilters } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiExcludeController,
  ApiExcludeEndpoint,
  ApiExtraModels,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiTags,
  ApiUnauthorizedResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import { CurrentViewer, OptionalAuth, type Viewer } from '../auth/optional-auth.decorator.js';
import { RequireScope } from '../auth/scopes.js';
import { TAGS } from '../common/api-tags.js';
import { EXAMPLE } from '../common/openapi-examples.js';
import { TrsErrorFilter } from '../common/filters/trs-error.filter.js';
import { AppConfig } from '../config/app-config.js';
import {
  DescriptorParams,
  FilesQuery,
  ToolParams,
  ToolsQuery,
  ToolVersionParams,
} from './dto/trs-requests.dto.js';
import {
  TOOL_CLASS_RESPONSE,
  toFileWrapperResponse,
  toServiceInfoResponse,
  toToolFileResponse,
  toToolResponse,
  toToolVersionResponse,
  TrsErrorDto,
  TrsFileWrapperDto,
  TrsServiceInfoDto,
  TrsToolClassDto,
  TrsToolDto,
  TrsToolFileDto,
  TrsToolVersionDto,
  type TrsRoot,
} from './dto/trs-responses.dto.js';
import { pagingHeaders, PAGING_HEADERS } from './paging.js';
import { serviceVersion } from './service-version.js';
import { REQUESTED_TYPES, type RequestedFile } from './tool-files.js';
import { TrsService } from './trs.service.js';

/** Where GA4GH TRS is served (API.md 10.2). */
export const TRS_PREFIX = '/ga4gh/trs/v2';
/** The same, at the path Dockstore's clients and cwltool build (`{registry}/api/ga4gh/v2/…`). */
export const DOCKSTORE_TRS_PREFIX = '/api/ga4gh/v2';

/** The bare files of PLAIN_ types: descriptors are text (cwltool reads them as such). */
const PLAIN_TYPE = 'text/plain; charset=utf-8';
/** A wildcard parameter's segments (decoded, so `%2F` inside one stays a slash of the path) as one path. */
const joined = (segments: string[] | string): string =>
  Array.isArray(segments) ? segments.join('/') : segments;
const trsError = (code: number, message: string): TrsErrorDto => ({ code, message });
const NOT_FOUND = {
  type: TrsErrorDto,
  description: 'No such tool or version visible to the caller',
  example: trsError(404, `No workflow ${EXAMPLE.workflowUuid}`),
};
const NO_FILE = {
  type: TrsErrorDto,
  description: 'No such tool, version or file visible to the caller, or the version is not of this type',
  example: trsError(
    404,
    `The tool ${EXAMPLE.workflowUuid} at version '${EXAMPLE.version}' has no CWL descriptor (it is GALAXY)`,
  ),
};
const BAD_TYPE = {
  type: TrsErrorDto,
  description: 'A type that is not a TRS descriptor type',
  example: trsError(400, `type must be one of ${REQUESTED_TYPES.join(', ')} (or plain-<TYPE>)`),
};
const DESCRIPTOR_REPLY = {
  description: 'The file wrapped in JSON (a descriptor type), or the bare file (a PLAIN_ type)',
  content: {
    'application/json': { schema: { $ref: getSchemaPath(TrsFileWrapperDto) } },
    'text/plain': { schema: { type: 'string' as const } },
  },
};

/**
 * GA4GH Tool Registry Service 2.1.0, read-only (API.md 10.2). Every read is open to anonymous
 * callers (public workflows); a token shows what its user may see as well (API.md 5.1), and a
 * registry's token with `workflow.read` what that registry sent.
 */
@ApiTags(TAGS.trs)
@RequireScope('workflow.read')
@ApiAuth()
@ApiUnauthorizedResponse({
  type: TrsErrorDto,
  description: 'A token was sent and is not valid',
  example: trsError(401, 'The token is not valid'),
})
@UseFilters(TrsErrorFilter)
@Controller(TRS_PREFIX.slice(1))
export class TrsController {
  /** The prefix of the links in replies: the one the request came by. */
  protected readonly prefix: string = TRS_PREFIX;

  constructor(
    private readonly trs: TrsService,
    private readonly config: AppConfig,
  ) {}

  @Get('service-info')
  @OptionalAuth()
  @ApiOperation({
    operationId: 'trs-service-info',
    summary: 'This registry, as GA4GH service-info 1.0.0 describes a service',
  })
  @ApiOkResponse({ type: TrsServiceInfoDto, description: 'This service, GA4GH service-info 1.0.0' })
  serviceInfo(@Req() request: Request): TrsServiceInfoDto {
    return toServiceInfoResponse(this.root(request), serviceVersion());
  }

  @Get('toolClasses')
  @OptionalAuth()
  @ApiOperation({
    operationId: 'trs-tool-classes',
    summary: 'The tool classes: `Workflow`, the only one here',
  })
  @ApiOkResponse({ type: TrsToolClassDto, isArray: true, description: 'The one tool class' })
  toolClasses(): TrsToolClassDto[] {
    return [TOOL_CLASS_RESPONSE];
  }

  @Get('tools')
  @OptionalAuth()
  @ApiOperation({
    operationId: 'trs-tools',
    summary: 'The tools (workflows) the caller may see that meet the filters, a page at a time',
    description:
      "In the registry's list order (the latest version registered last first). The paging headers link " +
      'the next page (when there is one), this page and the last one (`offset=last`: the last `limit` tools, ' +
      'read backwards, so that no page costs a count of all tools).',
  })
  @ApiOkResponse({
    type: TrsToolDto,
    isArray: true,
    headers: PAGING_HEADERS,
    description: 'A page of tools (none past the end)',
  })
  @ApiBadRequestResponse({
    type: TrsErrorDto,
    description: 'A limit, offset or descriptorType out of range',
    example: trsError(400, 'limit must be an integer from 1 to 1000'),
  })
  async tools(
    @Query() query: ToolsQuery,
    @CurrentViewer() viewer: Viewer,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<TrsToolDto[]> {
    const root = this.root(request);
    const page = await this.trs.tools(viewer, query);
    response.set(pagingHeaders(`${root.url}/tools`, query, page));
    return page.tools.map((tool) => toToolResponse(root, tool));
  }

  @Get('tools/:id')
  @OptionalAuth()
  @ApiOperation({ operationId: 'trs-tool', summary: 'One tool (a workflow) with its versions' })
  @ApiOkResponse({ type: TrsToolDto, description: 'The tool' })
  @ApiNotFoundResponse(NOT_FOUND)
  async tool(
    @Param() { id }: ToolParams,
    @CurrentViewer() viewer: Viewer,
    @Req() request: Request,
  ): Promise<TrsToolDto> {
    return toToolResponse(this.root(request), await this.trs.tool(id, viewer));
  }

  @Get('tools/:id/versions')
  @OptionalAuth()
  @ApiOperation({ operationId: 'trs-tool-versions', summary: "A tool's versions, older first" })
  @ApiOkResponse({ type: TrsToolVersionDto, isArray: true, description: 'Its versions' })
  @ApiNotFoundResponse(NOT_FOUND)
  async versions(
    @Param() { id }: ToolParams,
    @CurrentViewer() viewer: Viewer,
    @Req() request: Request,
  ): Promise<TrsToolVersionDto[]> {
    const root = this.root(request);
    const tool = await this.trs.tool(id, viewer);
    return tool.versions.map((version) => toToolVersionResponse(root, tool, version));
  }

  @Get('tools/:id/versions/:version_id')
  @OptionalAuth()
  @ApiOperation({ operationId: 'trs-tool-version', summary: 'One version of a tool' })
  @ApiOkResponse({ type: TrsToolVersionDto, description: 'The version' })
  @ApiNotFoundResponse(NOT_FOUND)
  async version(
    @Param() { id, version_id }: ToolVersionParams,
    @CurrentViewer() viewer: Viewer,
    @Req() request: Request,
  ): Promise<TrsToolVersionDto> {
    const { tool, version } = await this.trs.version(id, version_id, viewer);
    return toToolVersionResponse(this.root(request), tool, version);
  }

  @Get('tools/:id/versions/:version_id/:type/descriptor')
  @OptionalAuth()
  @ApiOperation({
    operationId: 'trs-tool-version-descriptor',
    summary: 'The main workflow of a version: wrapped in JSON, or bare for a PLAIN_ type',
  })
  @ApiExtraModels(TrsFileWrapperDto)
  @ApiOkResponse(DESCRIPTOR_REPLY)
  @ApiBadRequestResponse(BAD_TYPE)
  @ApiNotFoundResponse(NO_FILE)
  async descriptor(
    @Param() { id, version_id, type }: DescriptorParams,
    @CurrentViewer() viewer: Viewer,
    @Req() request: Request,
  ): Promise<TrsFileWrapperDto | StreamableFile> {
    return this.descriptorReply(id, version_id, type, undefined, viewer, request);
  }

  @Get('tools/:id/versions/:version_id/:type/descriptor/*relative_path')
  @OptionalAuth()
  @ApiOperation({
    operationId: 'trs-tool-version-descriptor-file',
    summary: "A file of a version's crate by its path from the main workflow's folder",
    description:
      'The path may hold slashes (`tools/sum.cwl`) and, percent-encoded as one segment, climb above the main ' +
      "workflow's folder (`..%2Ftest%2Fjob.yml`) as long as it stays inside the crate; a path leaving the crate, " +
      'absolute, or with a backslash is a 404. A path that names no file from that folder is taken from the ' +
      "crate's root: the main workflow's own `url` carries its path in the crate (`workflows/main.cwl`), and " +
      'the relative imports resolved against it (`../tools/x.cwl`) land on the crate paths of their files.',
  })
  @ApiParam({
    name: 'relative_path',
    type: String,
    example: EXAMPLE.crateFile,
    description: "A path relative to the main workflow's folder, else to the crate's root",
  })
  @ApiExtraModels(TrsFileWrapperDto)
  @ApiOkResponse(DESCRIPTOR_REPLY)
  @ApiBadRequestResponse(BAD_TYPE)
  @ApiNotFoundResponse(NO_FILE)
  async descriptorFile(
    @Param() { id, version_id, type }: DescriptorParams,
    @Param('relative_path') relativePath: string[] | string,
    @CurrentViewer() viewer: Viewer,
    @Req() request: Request,
  ): Promise<TrsFileWrapperDto | StreamableFile> {
    return this.descriptorReply(
      id,
      version_id,
      type,
      { after: 'descriptor', path: joined(relativePath) },
      viewer,
      request,
    );
  }

  @Get('tools/:id/versions/:version_id/:type/files')
  @OptionalAuth()
  @ApiOperation({
    operationId: 'trs-tool-version-files',
    summary:
      "The files of a version's crate with their types and SHA-256, or (`format=zip`) the crate's archive",
  })
  @ApiProduces('application/json', 'application/zip')
  @ApiOkResponse({
    content: {
      'application/json': {
        schema: { type: 'array', items: { $ref: getSchemaPath(TrsToolFileDto) } },
      },
      'application/zip': { schema: { type: 'string', format: 'binary' } },
    },
    description:
      "The files (paths from the main workflow's folder), or with `format=zip` the archive as registered",
  })
  @ApiExtraModels(TrsToolFileDto)
  @ApiBadRequestResponse(BAD_TYPE)
  @ApiNotFoundResponse(NO_FILE)
  async files(
    @Param() { id, version_id, type }: DescriptorParams,
    @Query() { format }: FilesQuery,
    @CurrentViewer() viewer: Viewer,
    @Res({ passthrough: true }) response: Response,
  ): Promise<TrsToolFileDto[] | StreamableFile> {
    if (format === 'zip') {
      const archive = await this.trs.archive(id, version_id, type, viewer);
      const stream = await archive.open();
      response.attachment(archive.filename);
      return new StreamableFile(stream, { type: 'application/zip', length: archive.size });
    }
    return (await this.trs.files(id, version_id, type, viewer)).map(toToolFileResponse);
  }

  @Get('tools/:id/versions/:version_id/:type/tests')
  @OptionalAuth()
  @ApiOperation({
    operationId: 'trs-tool-version-tests',
    summary: "A version's test files (those its test definitions name, and those in test/ or tests/ folders)",
  })
  @ApiOkResponse({
    type: TrsFileWrapperDto,
    isArray: true,
    description: 'The test files (none: an empty list)',
  })
  @ApiBadRequestResponse(BAD_TYPE)
  @ApiNotFoundResponse(NO_FILE)
  async tests(
    @Param() { id, version_id, type }: DescriptorParams,
    @CurrentViewer() viewer: Viewer,
    @Req() request: Request,
  ): Promise<TrsFileWrapperDto[]> {
    const root = this.root(request);
    const files = await this.trs.tests(id, version_id, type, viewer);
    return files.map((file) => toFileWrapperResponse(root, id, version_id, file));
  }

  /**
   * Where a relative import climbing out of the main workflow's folder (`run: ../tools/x.cwl` from
   * `workflows/`) lands when resolved against `…/{type}/descriptor/{name}`, the URL cwltool builds
   * from the primary descriptor's path in `/files`: `…/{type}/tools/x.cwl`. Declared after the
   * operations under `{type}/`, which keep `descriptor`, `files` and `tests`. Not in the OpenAPI
   * document: no TRS operation, a URL clients reach by resolution, not by name (API.md 10.2).
   */
  @Get('tools/:id/versions/:version_id/:type/*relative_path')
  @OptionalAuth()
  @ApiExcludeEndpoint()
  async fileAboveMain(
    @Param() { id, version_id, type }: DescriptorParams,
    @Param('relative_path') relativePath: string[] | string,
    @CurrentViewer() viewer: Viewer,
    @Req() request: Request,
  ): Promise<TrsFileWrapperDto | StreamableFile> {
    return this.descriptorReply(
      id,
      version_id,
      type,
      { after: 'type', path: joined(relativePath) },
      viewer,
      request,
    );
  }

  private async descriptorReply(
    id: string,
    versionId: string,
    type: string,
    wanted: RequestedFile | undefined,
    viewer: Viewer,
    request: Request,
  ): Promise<TrsFileWrapperDto | StreamableFile> {
    const read = await this.trs.descriptor(id, versionId, type, wanted, viewer);
    if (read.plain && 'bytes' in read) {
      return new StreamableFile(read.bytes, { type: PLAIN_TYPE, length: read.bytes.length });
    }
    if (read.plain) {
      const file = new StreamableFile(read.stream, { type: PLAIN_TYPE, length: read.size });
      // Headers are sent by then: a file found damaged part-way can only end in a cut connection.
      return file.setErrorHandler((_error, response) => {
        if (response.destroy) {
          response.destroy();
        } else {
          response.end();
        }
      });
    }
    return toFileWrapperResponse(this.root(request), id, versionId, read.file);
  }

  /** PUBLIC_BASE_URL, else what the request came to (Express applies TRUST_PROXY to both parts), and the prefix. */
  private root(request: Request): TrsRoot {
    const base = this.config.publicBaseUrl ?? `${request.protocol}://${request.host}`;
    return { base, host: new URL(base).host, url: `${base}${this.prefix}` };
  }
}

/** The same operations at Dockstore's path; the OpenAPI document lists them once, under TRS_PREFIX. */
@ApiExcludeController()
@Controller(DOCKSTORE_TRS_PREFIX.slice(1))
export class DockstorePathTrsController extends TrsController {
  protected override readonly prefix: string = DOCKSTORE_TRS_PREFIX;
}
