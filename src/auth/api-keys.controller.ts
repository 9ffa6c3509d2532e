import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseFilters } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiUnauthorizedResponse,
  ApiTags,
} from '@nestjs/swagger';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';
import { ProblemDetailsFilter } from '../common/filters/problem-details.filter.js';
import { ApiAuth } from './api-auth.decorator.js';
import { ApiKeysService } from './api-keys.service.js';
import type { AuthUser } from './auth-user.js';
import { CurrentUser } from './current-user.decorator.js';
import {
  ApiKeyIdParam,
  ApiKeyListDto,
  CreateApiKeyDto,
  CreatedApiKeyDto,
  toApiKeyResponse,
} from './dto/api-key.dto.js';
import { TAGS } from '../common/api-tags.js';
import { invalidMemberExample, problemExample } from '../common/dto/error-bodies.dto.js';
import { EXAMPLE } from '../common/openapi-examples.js';

/** The caller's API keys; `/users/current` is area B's, so errors are problem documents. */
@ApiUnauthorizedResponse({ type: ProblemDto, description: 'No valid token or API key' })
@UseFilters(ProblemDetailsFilter)
@ApiTags(TAGS.apiKeys)
@Controller('users/current/apikeys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @ApiAuth({ apiKey: false })
  @ApiOperation({
    operationId: 'user-apikeys-post',
    summary: 'Make an API key for the caller',
    description:
      'Answers the key once; only its prefix and a hash are kept. Needs a token from `POST /api/v1/auth`: ' +
      'a request authenticated by an API key cannot make another (403), so a leaked key cannot outlive its revocation.',
  })
  @ApiCreatedResponse({ type: CreatedApiKeyDto, description: 'The new key, shown this once' })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'A name missing or too long, or a bad expires_at',
    example: invalidMemberExample('name', 'name must be a string'),
  })
  @ApiForbiddenResponse({
    type: ProblemDto,
    description: 'The request was authenticated by an API key',
    example: problemExample(
      403,
      'API keys are made with a token from POST /api/v1/auth, not with another API key',
    ),
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description: 'The caller holds 100 keys already',
    example: problemExample(409, 'A user holds at most 100 API keys; revoke one first'),
  })
  async create(@Body() body: CreateApiKeyDto, @CurrentUser() user: AuthUser): Promise<CreatedApiKeyDto> {
    const expiresAt = body.expires_at === undefined ? undefined : new Date(body.expires_at);
    const created = await this.keys.create(user, body.name, expiresAt);
    return { ...toApiKeyResponse(created.row), key: created.key };
  }

  @Get()
  @ApiAuth()
  @ApiOperation({
    operationId: 'user-apikeys-get',
    summary: "The caller's API keys, without the keys themselves",
  })
  @ApiOkResponse({ type: ApiKeyListDto, description: "The caller's keys, without their secrets" })
  async list(@CurrentUser() user: AuthUser): Promise<ApiKeyListDto> {
    return { items: (await this.keys.list(user.id)).map(toApiKeyResponse) };
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiAuth()
  @ApiOperation({
    operationId: 'user-apikeys-delete',
    summary: "Revoke one of the caller's API keys, with immediate effect",
  })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'The id is not a positive integer',
    example: invalidMemberExample('id', 'id must be a positive integer'),
  })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'The caller has no key with this id',
    example: problemExample(404, `No API key ${EXAMPLE.apiKeyId}`),
  })
  async revoke(@Param() { id }: ApiKeyIdParam, @CurrentUser() user: AuthUser): Promise<void> {
    await this.keys.revoke(user.id, id);
  }
}
