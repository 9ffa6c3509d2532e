import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseFilters } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
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
import { ClientsService, MAX_CLIENTS_PER_USER } from './clients.service.js';
import {
  ClientIdParam,
  ClientListDto,
  CreateClientDto,
  CreatedClientDto,
  toClientResponse,
} from './dto/client.dto.js';

/** The caller's applications (API.md 15); `/users/current` is area B's, so errors are problem documents. */
@ApiUnauthorizedResponse({ type: ProblemDto, description: 'No valid token or API key' })
@UseFilters(ProblemDetailsFilter)
@ApiTags(TAGS.oauth2)
@ApiAuth()
@Controller('users/current/clients')
export class ClientsController {
  constructor(private readonly clients: ClientsService) {}

  @Post()
  @ApiOperation({
    operationId: 'user-clients-post',
    summary: 'Register an application that may ask people to let it act for them (OAuth2 client)',
    description:
      'Answers the client id and, for a confidential client, its secret once (only a hash is kept). The ' +
      'application then sends people to GET /oauth2/authorize and exchanges the code at POST /oauth2/token.',
  })
  @ApiCreatedResponse({ type: CreatedClientDto, description: 'Registered; a secret is shown this once' })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'A name missing or too long; redirect_uris missing, more than 10, or one that cannot be one',
    example: invalidMemberExample('redirect_uris[0]', 'redirect_uris[0] must not have a fragment'),
  })
  @ApiConflictResponse({
    type: ProblemDto,
    description: `The caller has ${MAX_CLIENTS_PER_USER} applications already`,
    example: problemExample(
      409,
      `A user registers at most ${MAX_CLIENTS_PER_USER} applications; delete one first`,
    ),
  })
  async create(@Body() body: CreateClientDto, @CurrentUser() user: AuthUser): Promise<CreatedClientDto> {
    const created = await this.clients.create(user.id, {
      name: body.name,
      redirectUris: body.redirect_uris,
      confidential: body.confidential ?? true,
    });
    return {
      ...toClientResponse(created.client),
      ...(created.clientSecret === undefined ? {} : { client_secret: created.clientSecret }),
    };
  }

  @Get()
  @ApiOperation({ operationId: 'user-clients-get', summary: "The caller's applications, without secrets" })
  @ApiOkResponse({ type: ClientListDto, description: "The caller's applications, oldest first" })
  async list(@CurrentUser() user: AuthUser): Promise<ClientListDto> {
    return { items: (await this.clients.list(user.id)).map(toClientResponse) };
  }

  @Delete(':client_id')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'user-clients-delete',
    summary: "Delete one of the caller's applications, revoking every token it holds at once",
  })
  @ApiNoContentResponse({ description: 'Deleted, with every code and token issued to it' })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description: 'Not a client id',
    example: invalidMemberExample('client_id', 'client_id must be a client id of this service'),
  })
  @ApiNotFoundResponse({
    type: ProblemDto,
    description: 'The caller has no application with this client id',
    example: problemExample(404, `No application ${EXAMPLE.appClientId}`),
  })
  async remove(@Param() { client_id }: ClientIdParam, @CurrentUser() user: AuthUser): Promise<void> {
    await this.clients.remove(user.id, client_id);
  }
}
