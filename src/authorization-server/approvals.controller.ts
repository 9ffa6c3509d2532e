import { Controller, Delete, Get, HttpCode, Param, UseFilters } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { TAGS } from '../common/api-tags.js';
import { invalidMemberExample, ProblemDto, problemExample } from '../common/dto/error-bodies.dto.js';
import { ProblemDetailsFilter } from '../common/filters/problem-details.filter.js';
import { EXAMPLE } from '../common/openapi-examples.js';
import { ApprovalsService } from './approvals.service.js';
import { ApprovalListDto, toApprovalResponse } from './dto/approval.dto.js';
import { ClientIdParam } from './dto/client.dto.js';

/**
 * The applications the caller let act for them (API.md 15); account routes, which no application's
 * token reaches. `/users/current` is area B's, so errors are problem documents.
 */
@ApiUnauthorizedResponse({ type: ProblemDto, description: 'No valid token or API key' })
@UseFilters(ProblemDetailsFilter)
@ApiTags(TAGS.oauth2)
@ApiAuth()
@Controller('users/current/authorizations')
export class ApprovalsController {
  constructor(private readonly approvals: ApprovalsService) {}

  @Get()
  @ApiOperation({
    operationId: 'user-authorizations-get',
    summary: 'The applications the caller let act for them, with what each may do',
    description:
      'One item per application, in the order they were first approved; approvals that expired are gone.',
  })
  @ApiOkResponse({ type: ApprovalListDto, description: "The caller's approvals in force" })
  async list(@CurrentUser() user: AuthUser): Promise<ApprovalListDto> {
    return { items: (await this.approvals.list(user.id)).map(toApprovalResponse) };
  }

  @Delete(':client_id')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'user-authorizations-delete',
    summary:
      'Revoke what the caller let an application do: its codes, access and refresh tokens stop at once',
  })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'Not a client id',
    example: invalidMemberExample('client_id', 'client_id must be a client id of this service'),
  })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'The caller gave no application with this client id access (or none is in force)',
    example: problemExample(404, `You gave no application ${EXAMPLE.appClientId} access`),
  })
  async revoke(@Param() { client_id }: ClientIdParam, @CurrentUser() user: AuthUser): Promise<void> {
    await this.approvals.revoke(user.id, client_id);
  }
}
