import { Controller, Get, Query, UseFilters } from '@nestjs/common';
import { ApiOperation, ApiPropertyOptional, ApiResponse, ApiTags } from '@nestjs/swagger';
import { IsOptional, IsString, Length, Matches } from 'class-validator';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import { CurrentViewer, OptionalAuth, type Viewer } from '../auth/optional-auth.decorator.js';
import { TAGS } from '../common/api-tags.js';
import { HtmlErrorFilter } from './html-error.filter.js';
import { StatusPage } from './status-pages.controller.js';
import { StatusPagesService } from './status-pages.service.js';

export class IssueTypesPageQuery {
  // A link on the page: an http(s) URL or a path of this site, never `javascript:` or another scheme.
  @IsOptional()
  @IsString()
  @Length(1, 2048)
  @Matches(/^(https?:\/\/\S+|\/(?!\/)\S*)$/i, {
    message: 'back must be an http(s) URL or a path starting with /',
  })
  @ApiPropertyOptional({
    type: String,
    maxLength: 2048,
    example: '/status',
    description:
      'Where the page\'s "Back" link goes (LifeMonitor\'s callback URL): an http(s) URL or a path of this site',
  })
  back?: string;
}

/**
 * LifeMonitor's `workflows_get_issue_types_as_html` (API.md 12), rendered like the status pages.
 * The app imports StatusPagesModule before WorkflowsModule, so that this route is tried before
 * `GET /workflows/{wf_uuid}` would take `issues.html` for a uuid.
 */
@ApiTags(TAGS.workflows)
@ApiAuth()
@OptionalAuth()
@UseFilters(HtmlErrorFilter)
@Controller('workflows')
export class IssueTypesPageController {
  constructor(private readonly pages: StatusPagesService) {}

  @Get('issues.html')
  @StatusPage()
  @ApiOperation({
    operationId: 'workflows-get-issue-types-as-html',
    summary: 'The types of issue the repository checks report, as an HTML page',
    description:
      'What GET /workflows/issues lists, server-rendered and readable without JavaScript; each type is an anchor ' +
      '(`#<identifier>`) that the status pages link to. No token needed.',
  })
  @ApiResponse({
    status: 400,
    description: 'A `back` that is not an http(s) URL or a path: an HTML error page',
    content: {
      'text/html': { schema: { type: 'string' }, example: '<!doctype html><html lang="en">…</html>' },
    },
  })
  issueTypes(@Query() { back }: IssueTypesPageQuery, @CurrentViewer() viewer: Viewer): string {
    return this.pages.issueTypes(viewer, back);
  }
}
