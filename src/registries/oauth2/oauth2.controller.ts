import { Controller, HttpCode, Post, Req, Res, UseFilters } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConsumes,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { EXAMPLE } from '../../common/openapi-examples.js';
import { Public } from '../../auth/public.decorator.js';
import { REGISTRY_CLIENT_SCOPES } from '../../auth/scopes.js';
import { TAGS } from '../../common/api-tags.js';
import { RegistryTokensService } from '../registry-tokens.service.js';
import { parseTokenRequest } from './client-credentials.js';
import { OAuthErrorFilter } from './oauth-error.filter.js';

export class TokenRequestDto {
  @ApiProperty({ enum: ['client_credentials'], example: 'client_credentials' })
  grant_type!: string;

  @ApiProperty({ required: false, example: 'fWWLbOAw0pLlRKIWOQlkO4b4xyz1', description: 'Or HTTP Basic' })
  client_id?: string;

  @ApiProperty({
    required: false,
    example: 'Ne1kK6NljWRayqzDfgMWBfVplkRGZto6MCjdfhK1jY7',
    description: 'Or HTTP Basic',
  })
  client_secret?: string;

  @ApiProperty({
    required: false,
    example: 'registry.info registry.workflow.read registry.workflow.write workflow.read workflow.write',
    description: `Space-separated, any of: ${REGISTRY_CLIENT_SCOPES.join(' ')}; absent: all`,
  })
  scope?: string;
}

export class TokenReplyDto {
  @ApiProperty({ example: 'wfr_FUY30D5gtDOeEPE2qu0MbWg2afrrst4whOOB1zHDtF0' })
  access_token!: string;

  @ApiProperty({ enum: ['Bearer'], example: 'Bearer' })
  token_type!: 'Bearer';

  @ApiProperty({ example: 3600, description: 'Seconds' })
  expires_in!: number;

  @ApiProperty({ example: 'registry.info registry.workflow.read', description: 'The scopes granted' })
  scope!: string;
}

export class OAuthErrorDto {
  @ApiProperty({
    enum: [
      'invalid_request',
      'invalid_client',
      'unsupported_grant_type',
      'invalid_scope',
      'temporarily_unavailable',
      'server_error',
    ],
    example: 'invalid_client',
  })
  error!: string;

  @ApiProperty({ example: 'Client authentication failed: unknown client or wrong secret' })
  error_description!: string;
}

/** OAuth2's token endpoint for registry clients (RFC 6749 4.4, API.md 10.1). */
@Public()
@UseFilters(OAuthErrorFilter)
@ApiTags(TAGS.registries)
@Controller('oauth2')
export class OAuth2Controller {
  constructor(private readonly tokens: RegistryTokensService) {}

  @Post('token')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'oauth-token',
    summary: "A registry client's access token (client credentials grant)",
    description:
      'RFC 6749 4.4: a form body with grant_type=client_credentials, the client authenticated by client_id and ' +
      'client_secret in the body or by HTTP Basic, and an optional scope. The token is sent like a login token ' +
      '(Authorization: Bearer, X-Auth-Token) and acts for the registry within its scopes. Failed client ' +
      'authentications count against the login limit (429 past it). Errors are RFC 6749 5.2 JSON.',
  })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody({
    type: TokenRequestDto,
    examples: {
      body: {
        value: {
          grant_type: 'client_credentials',
          client_id: EXAMPLE.registryClientId,
          client_secret: EXAMPLE.registryClientSecret,
        },
      },
    },
  })
  @ApiOkResponse({ type: TokenReplyDto, description: 'With Cache-Control: no-store' })
  @ApiBadRequestResponse({
    type: OAuthErrorDto,
    description: 'invalid_request, unsupported_grant_type, invalid_scope',
  })
  @ApiUnauthorizedResponse({ type: OAuthErrorDto, description: 'invalid_client' })
  @ApiTooManyRequestsResponse({
    type: OAuthErrorDto,
    description: 'Too many failed client authentications; see Retry-After',
  })
  async token(
    @Req() request: Request & { rawBody?: Buffer },
    @Res({ passthrough: true }) response: Response,
  ): Promise<TokenReplyDto> {
    const asked = parseTokenRequest(
      request.get('content-type'),
      request.rawBody,
      request.get('authorization'),
    );
    const issued = await this.tokens.issue(asked, request.ip ?? 'unknown');
    response.setHeader('Cache-Control', 'no-store');
    response.setHeader('Pragma', 'no-cache');
    return {
      access_token: issued.accessToken,
      token_type: 'Bearer',
      expires_in: issued.expiresIn,
      scope: issued.scopes.join(' '),
    };
  }
}
