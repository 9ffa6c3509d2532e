import { Controller, Delete, Get, HttpCode, Param, UseFilters } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { TAGS } from '../../common/api-tags.js';
import { ProblemDto, problemExample } from '../../common/dto/error-bodies.dto.js';
import { ProblemDetailsFilter } from '../../common/filters/problem-details.filter.js';
import { ApiAuth } from '../api-auth.decorator.js';
import type { AuthUser } from '../auth-user.js';
import { CurrentUser } from '../current-user.decorator.js';
import { IdentitiesDto, ProviderParam } from './dto.js';
import { toIdentityDto } from './identity-replies.js';
import { IdentitiesService } from './identities.service.js';

/** The caller's linked identities (API.md 15); `/users/current…` is area B's, so errors are problem documents. */
@ApiAuth()
@UseFilters(ProblemDetailsFilter)
@ApiTags(TAGS.users)
@Controller('users/current/identities')
export class IdentitiesController {
  constructor(private readonly identities: IdentitiesService) {}

  @Get()
  @ApiOperation({
    operationId: 'users-current-identities-get',
    summary: "The caller's identities at sign-in providers, oldest link first",
  })
  @ApiOkResponse({ type: IdentitiesDto, description: 'The identities linked to the account (empty: none)' })
  @ApiUnauthorizedResponse({ type: ProblemDto, description: 'No valid token or API key' })
  async list(@CurrentUser() caller: AuthUser): Promise<IdentitiesDto> {
    return { items: (await this.identities.list(caller.id)).map(toIdentityDto) };
  }

  @Delete(':provider')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'users-current-identities-delete',
    summary: "Unlinks the caller's identity at a provider; never the account's last way to sign in",
  })
  @ApiNoContentResponse({ description: 'Unlinked' })
  @ApiUnauthorizedResponse({ type: ProblemDto, description: 'No valid token or API key' })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'The account has no identity at that provider',
    example: problemExample(404, 'The account has no identity at github'),
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description: 'The last way to sign in: no password and no other identity',
    example: problemExample(
      409,
      "The github identity is this account's only way to sign in (it has no password and no other identity): link another first",
    ),
  })
  async unlink(@CurrentUser() caller: AuthUser, @Param() { provider }: ProviderParam): Promise<void> {
    await this.identities.unlink(caller.id, provider);
  }
}
