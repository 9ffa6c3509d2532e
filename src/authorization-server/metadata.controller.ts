import { Controller, Get, Header, Req } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';
import type { Request } from 'express';
import { TokenGrants } from '../auth/oauth2/token-grant.js';
import { Public } from '../auth/public.decorator.js';
import { REGISTRY_CLIENT_SCOPES } from '../auth/scopes.js';
import { TAGS } from '../common/api-tags.js';
import { baseUrlOf } from '../common/base-url.js';
import { AppConfig } from '../config/app-config.js';

const ISSUER = 'https://workflows.example.org';

export class AuthorizationServerMetadataDto {
  @ApiProperty({ example: ISSUER, description: 'PUBLIC_BASE_URL, else the address the request came to' })
  issuer!: string;

  @ApiProperty({ example: `${ISSUER}/oauth2/authorize` })
  authorization_endpoint!: string;

  @ApiProperty({ example: `${ISSUER}/oauth2/token` })
  token_endpoint!: string;

  @ApiProperty({ type: [String], example: [...REGISTRY_CLIENT_SCOPES] })
  scopes_supported!: string[];

  @ApiProperty({ type: [String], example: ['code'] })
  response_types_supported!: string[];

  @ApiProperty({ type: [String], example: ['query'] })
  response_modes_supported!: string[];

  @ApiProperty({ type: [String], example: ['client_credentials', 'authorization_code', 'refresh_token'] })
  grant_types_supported!: string[];

  @ApiProperty({ type: [String], example: ['client_secret_basic', 'client_secret_post', 'none'] })
  token_endpoint_auth_methods_supported!: string[];

  @ApiProperty({ type: [String], example: ['S256'] })
  code_challenge_methods_supported!: string[];

  @ApiProperty({ example: true, description: 'RFC 9207: the redirect carries `iss`' })
  authorization_response_iss_parameter_supported!: boolean;

  @ApiProperty({ example: `${ISSUER}/docs` })
  service_documentation!: string;
}

/** RFC 8414: what an application needs to know to use this authorization server (API.md 15). */
@Public()
@ApiTags(TAGS.oauth2)
@Controller('.well-known')
export class MetadataController {
  constructor(
    private readonly grants: TokenGrants,
    private readonly config: AppConfig,
  ) {}

  @Get('oauth-authorization-server')
  @Header('Cache-Control', 'public, max-age=3600')
  @ApiOperation({
    operationId: 'oauth-authorization-server-metadata',
    summary: "The authorization server's metadata (RFC 8414)",
    description:
      'Its endpoints, scopes, grant types, client authentication methods and PKCE method, for clients that ' +
      'configure themselves from it. No token needed.',
  })
  @ApiOkResponse({ type: AuthorizationServerMetadataDto, description: 'RFC 8414 3.2' })
  @ApiPayloadTooLargeResponse({ type: ProblemDto, description: 'A request body over the limit' })
  metadata(@Req() request: Request): AuthorizationServerMetadataDto {
    const issuer = baseUrlOf(this.config, request);
    return {
      issuer,
      authorization_endpoint: `${issuer}/oauth2/authorize`,
      token_endpoint: `${issuer}/oauth2/token`,
      scopes_supported: [...REGISTRY_CLIENT_SCOPES],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: this.grants.types(),
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${issuer}/docs`,
    };
  }
}
