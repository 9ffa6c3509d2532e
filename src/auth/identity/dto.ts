import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { OptionalQueryFlag } from '../../common/validation.js';

export class LoginQuery {
  @IsOptional()
  @IsString()
  @ApiPropertyOptional({
    type: String,
    example: '/status',
    description:
      'Where to go once signed in: a path on this service (`/status/account`, `/status/{uuid}`); anything else ' +
      '(another host, `//host`, a backslash) is replaced by `/status`',
  })
  next?: string;

  @OptionalQueryFlag(
    "Link the provider's identity to the signed-in caller's account instead of signing in (needs the session)",
    false,
  )
  link?: boolean;
}

export class ProviderParam {
  @IsString()
  @ApiProperty({
    type: String,
    example: 'lslogin',
    description: 'The name of the provider in IDENTITY_PROVIDERS_FILE',
  })
  provider!: string;
}

export class ProviderDto {
  @ApiProperty({ example: 'lslogin' })
  name!: string;

  @ApiProperty({ example: 'LS Login' })
  label!: string;

  @ApiProperty({ enum: ['oidc', 'github', 'seek'], example: 'oidc' })
  type!: string;

  @ApiProperty({ example: 'https://workflows.example.org/oauth2/login/lslogin', format: 'uri' })
  login_url!: string;
}

export class ProvidersDto {
  @ApiProperty({ type: [ProviderDto] })
  items!: ProviderDto[];
}

export class IdentityDto {
  @ApiProperty({ example: 'lslogin' })
  provider!: string;

  @ApiProperty({
    example: '7c1bd3ab-cc2d-4b65-8a1f-0d7e3d0a59f2@lifescience-ri.eu',
    description: "The provider's id of the person",
  })
  subject!: string;

  @ApiProperty({ type: String, nullable: true, example: 'alice' })
  username!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'alice@example.org',
    description: 'Only an address the provider verified',
  })
  email!: string | null;

  @ApiProperty({ example: '2026-11-02T09:15:00.000Z', format: 'date-time' })
  linked_at!: string;

  @ApiProperty({ type: String, nullable: true, example: '2026-11-20T17:02:11.000Z', format: 'date-time' })
  last_used_at!: string | null;
}

export class IdentitiesDto {
  @ApiProperty({ type: [IdentityDto] })
  items!: IdentityDto[];
}
