import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsOptional,
  IsString,
  Length,
  Matches,
} from 'class-validator';
import { EXAMPLE } from '../../common/openapi-examples.js';
import { RequiredText } from '../../common/validation.js';
import type { OAuthClientEntity } from '../entities/oauth-client.entity.js';
import { REDIRECT_URIS } from '../redirect-uris.js';

export class CreateClientDto {
  @RequiredText(1, 128, 'Workflow dashboard', 'What the application is called: the consent page shows it')
  name!: string;

  @IsArray({ message: 'redirect_uris must be an array of URLs' })
  @ArrayMinSize(1, { message: 'redirect_uris must hold at least one URL' })
  @ArrayMaxSize(REDIRECT_URIS.max, { message: `redirect_uris holds at most ${REDIRECT_URIS.max} URLs` })
  @IsString({ each: true, message: 'each of redirect_uris must be a string' })
  @Length(1, REDIRECT_URIS.length, {
    each: true,
    message: `each of redirect_uris must be 1 to ${REDIRECT_URIS.length} characters`,
  })
  @ApiProperty({
    type: [String],
    minItems: 1,
    maxItems: REDIRECT_URIS.max,
    example: [EXAMPLE.appRedirectUri],
    description:
      'Where the application may be sent back to: https URLs (http only to localhost, 127.0.0.1 or [::1]), ' +
      'without a fragment. Authorization requests must name one of them as the same string exactly.',
  })
  redirect_uris!: string[];

  @IsOptional()
  @IsBoolean({ message: 'confidential must be true or false' })
  @ApiPropertyOptional({
    example: true,
    default: true,
    description:
      'true: a server that keeps a client secret (answered once); false: a public client (a browser or ' +
      'desktop application) without a secret, which must use PKCE',
  })
  confidential?: boolean;
}

export class ClientIdParam {
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'client_id must be a client id of this service' })
  @ApiProperty({ example: EXAMPLE.appClientId })
  client_id!: string;
}

export class ClientDto {
  @ApiProperty({ example: EXAMPLE.appClientId })
  client_id!: string;

  @ApiProperty({ example: 'Workflow dashboard' })
  name!: string;

  @ApiProperty({ type: [String], example: [EXAMPLE.appRedirectUri] })
  redirect_uris!: string[];

  @ApiProperty({ example: true })
  confidential!: boolean;

  @ApiProperty({ format: 'date-time', example: '2026-11-24T00:15:00.000Z' })
  created!: string;
}

export class CreatedClientDto extends ClientDto {
  @ApiPropertyOptional({
    example: 'q9Xh1pTt3kWJ7nLr2CzV0bQm8sYf5uAe6dGi4oPjHwK',
    description:
      "A confidential client's secret, shown this once (only a hash is kept); absent for a public client",
  })
  client_secret?: string;
}

export class ClientListDto {
  @ApiProperty({ type: ClientDto, isArray: true })
  items!: ClientDto[];
}

export function toClientResponse(client: OAuthClientEntity): ClientDto {
  return {
    client_id: client.clientId,
    name: client.name,
    redirect_uris: client.redirectUris,
    confidential: client.confidential,
    created: client.createdAt.toISOString(),
  };
}
