import { Controller, HttpCode, Post, Req, Res, UseFilters } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConsumes,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { TAGS } from '../../common/api-tags.js';
import { EXAMPLE } from '../../common/openapi-examples.js';
import { Public } from '../public.decorator.js';
import { REGISTRY_CLIENT_SCOPES } from '../scopes.js';
import { OAuthErrorFilter } from './oauth-error.filter.js';
import { TokenGrants } from './token-grant.js';
import { parseTokenRequest } from './token-request.js';

const GRANT_TYPES = ['client_credentials', 'authorization_code', 'refresh_token'];

export class TokenRequestDto {
  @ApiProperty({ enum: GRANT_TYPES, example: 'client_credentials' })
  grant_type!: string;

  @ApiPropertyOptional({
    example: EXAMPLE.registryClientId,
    description: 'Or HTTP Basic; a public client sends its client_id alone',
  })
  client_id?: string;

  @ApiPropertyOptional({ example: EXAMPLE.registryClientSecret, description: 'Or HTTP Basic' })
  client_secret?: string;

  @ApiPropertyOptional({
    example: 'registry.info registry.workflow.read registry.workflow.write workflow.read workflow.write',
    description:
      `client_credentials: space-separated, any of: ${REGISTRY_CLIENT_SCOPES.join(' ')}; absent: all. ` +
      "refresh_token: a subset of the grant's scopes; absent: all of them",
  })
  scope?: string;

  @ApiPropertyOptional({
    example: 'SplxlOBeZQQYbYS6WxSbIA0H7hWZyLQ2sUX9WQJ6rPw',
    description: 'authorization_code: the code the redirect carried (single use, 60 s)',
  })
  code?: string;

  @ApiPropertyOptional({
    example: EXAMPLE.appRedirectUri,
    description: 'authorization_code: the redirect_uri of the authorization request, exactly',
  })
  redirect_uri?: string;

  @ApiPropertyOptional({
    example: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
    description: 'authorization_code: the PKCE verifier (RFC 7636) whose S256 was the code_challenge',
  })
  code_verifier?: string;

  @ApiPropertyOptional({
    example: 'wfar_tGzv3JOkF0XG5Qx2TlKWIA9ExAmPlE2rT8Fq1nVbWcs',
    description: 'refresh_token: the refresh token, used once',
  })
  refresh_token?: string;
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

  @ApiPropertyOptional({
    example: 'wfar_tGzv3JOkF0XG5Qx2TlKWIA9ExAmPlE2rT8Fq1nVbWcs',
    description:
      'authorization_code and refresh_token grants: the next refresh token (the one presented is spent)',
  })
  refresh_token?: string;
}

export class OAuthErrorDto {
  @ApiProperty({
    enum: [
      'invalid_request',
      'invalid_client',
      'invalid_grant',
      'unauthorized_client',
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

/**
 * OAuth2's token endpoint (RFC 6749 3.2, API.md 10.1 and 15): one route for every grant, each
 * grant a TokenGrant of the module that owns what it issues.
 */
@Public()
@UseFilters(OAuthErrorFilter)
@ApiTags(TAGS.oauth2)
@Controller('oauth2')
export class TokenController {
  constructor(private readonly grants: TokenGrants) {}

  @Post('token')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'oauth-token',
    summary:
      'An access token: client credentials (registries), authorization code or refresh token (applications)',
    description:
      'RFC 6749 3.2, a form body. `client_credentials` (4.4): a registry client authenticated by client_id and ' +
      'client_secret in the body or by HTTP Basic, with an optional scope; the token acts for the registry. ' +
      '`authorization_code` (4.1.3): the code of GET /oauth2/authorize, its exact redirect_uri and the PKCE ' +
      'code_verifier, a confidential client authenticated as above, a public one sending its client_id; the reply ' +
      'carries a refresh token. `refresh_token` (6): the refresh token, spent on use and replaced by the one in the ' +
      'reply; a spent one presented again revokes every token of its grant. Application tokens act for the user ' +
      'within the granted scopes. Tokens are sent like a login token (Authorization: Bearer, X-Auth-Token). ' +
      'Failed client authentications count against the login limit (429 past it). Errors are RFC 6749 5.2 JSON.',
  })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody({
    type: TokenRequestDto,
    examples: {
      client_credentials: {
        value: {
          grant_type: 'client_credentials',
          client_id: EXAMPLE.registryClientId,
          client_secret: EXAMPLE.registryClientSecret,
        },
      },
      authorization_code: {
        value: {
          grant_type: 'authorization_code',
          client_id: EXAMPLE.appClientId,
          code: 'SplxlOBeZQQYbYS6WxSbIA0H7hWZyLQ2sUX9WQJ6rPw',
          redirect_uri: EXAMPLE.appRedirectUri,
          code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
        },
      },
      refresh_token: {
        value: {
          grant_type: 'refresh_token',
          client_id: EXAMPLE.appClientId,
          refresh_token: 'wfar_tGzv3JOkF0XG5Qx2TlKWIA9ExAmPlE2rT8Fq1nVbWcs',
        },
      },
    },
  })
  @ApiOkResponse({ type: TokenReplyDto, description: 'With Cache-Control: no-store' })
  @ApiBadRequestResponse({
    type: OAuthErrorDto,
    description:
      'invalid_request, invalid_grant (a code or refresh token unknown, spent, expired, of another client, or a ' +
      'redirect_uri or code_verifier that does not match), unauthorized_client, unsupported_grant_type, invalid_scope',
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
    const issued = await this.grants.issue(asked, request.ip ?? 'unknown');
    response.setHeader('Cache-Control', 'no-store');
    response.setHeader('Pragma', 'no-cache');
    return {
      access_token: issued.accessToken,
      token_type: 'Bearer',
      expires_in: issued.expiresIn,
      scope: issued.scopes.join(' '),
      ...(issued.refreshToken === undefined ? {} : { refresh_token: issued.refreshToken }),
    };
  }
}
