import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseFilters } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import { TAGS } from '../common/api-tags.js';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { Roles } from '../auth/roles.decorator.js';
import { EnvelopeFilter } from '../common/filters/envelope.filter.js';
import { callerOf } from './caller.js';
import { CloudName, Operation } from './cloud-route.decorators.js';
import { ApiEnvelopeErrors } from './dto/api-envelope-errors.decorator.js';
import {
  ImportKeyPairDto,
  KeyPairReplyDto,
  KeyPairsReplyDto,
  ResultReplyDto,
  toKeyPairDto,
} from './dto/machines.dto.js';
import { KeyPairsService } from './key-pairs.service.js';

const KEY_PAIRS =
  'Each user sees and uses only their own key pairs (an admin sees all, with their owners). At the cloud a key ' +
  'pair is named `<your username>.<name>`, so users sharing one cloud account never collide. OpenStack keeps ' +
  'them in Nova (os-keypairs), EC2 in the account (ImportKeyPair), a dummy cloud in the database.';

const UNSUPPORTED = {
  status: 409,
  description: 'The cloud keeps no key pairs',
  message: "Cloud 'lab' (type scratch) cannot keep SSH key pairs",
} as const;

/** Area C: SSH key pairs of users, `/api/v1/keypairs{/<cloud>}` (API.md 13). HTTP only. */
@ApiTags(TAGS.keyPairs)
@ApiAuth()
@ApiEnvelopeErrors(401, 403)
@UseFilters(EnvelopeFilter)
@Roles('agent')
@Controller('api/v1')
export class KeyPairsController {
  constructor(private readonly keyPairs: KeyPairsService) {}

  @Get('keypairs{/:cloud}')
  @Operation('keypairs-get', 'Your key pairs in a cloud (an admin: all)', true, KEY_PAIRS)
  @ApiOkResponse({ type: KeyPairsReplyDto, description: 'The key pairs' })
  @ApiEnvelopeErrors(UNSUPPORTED, 500, 502, 503)
  async list(@CloudName() cloud: string, @CurrentUser() user: AuthUser): Promise<KeyPairsReplyDto> {
    const listed = await this.keyPairs.list(cloud, callerOf(user));
    return { status: 'ok', keypairs: listed.keyPairs.map(toKeyPairDto) };
  }

  @Post('keypairs{/:cloud}')
  @Operation(
    'keypairs-post',
    'Imports an OpenSSH public key (RSA or ed25519) as one of your key pairs',
    true,
    KEY_PAIRS,
  )
  @ApiBody({ type: ImportKeyPairDto })
  @ApiCreatedResponse({
    type: KeyPairReplyDto,
    description: 'The key pair, with the fingerprint the cloud reports',
  })
  @ApiEnvelopeErrors(
    {
      status: 400,
      description: 'A name or public key that is missing or malformed (the cloud’s own refusal included)',
      message:
        "public_key is not an OpenSSH RSA or ed25519 public key: the type 'ssh-dss' is not ssh-rsa or ssh-ed25519",
    },
    {
      status: 409,
      description: 'You have a key pair of that name in this cloud, or the cloud keeps none',
      message: "You have a key pair 'laptop' in cloud 'default' already",
    },
    500,
    502,
    503,
  )
  async import(
    @CloudName() cloud: string,
    @Body() body: ImportKeyPairDto,
    @CurrentUser() user: AuthUser,
  ): Promise<KeyPairReplyDto> {
    const made = await this.keyPairs.import(cloud, body.name, body.public_key, callerOf(user));
    return { status: 'ok', keypair: toKeyPairDto(made.keyPair) };
  }

  @Delete('keypairs/:name{/:cloud}')
  @HttpCode(200)
  @Operation(
    'keypairs-delete',
    'Deletes one of your key pairs',
    true,
    `${KEY_PAIRS} An admin deletes another user’s key pair by its whole name at the cloud (\`bob.laptop\`).`,
  )
  @ApiParam({ name: 'name', description: 'Your name for the key pair', example: 'laptop' })
  @ApiOkResponse({ type: ResultReplyDto, description: 'The key pair is deleted' })
  @ApiEnvelopeErrors(
    {
      status: 404,
      description: 'You have no key pair of that name in this cloud',
      message: "No key pair 'laptop' of yours in cloud 'default'",
    },
    UNSUPPORTED,
    500,
    502,
    503,
  )
  async delete(
    @CloudName() cloud: string,
    @Param('name') name: string,
    @CurrentUser() user: AuthUser,
  ): Promise<ResultReplyDto> {
    await this.keyPairs.delete(cloud, name, callerOf(user));
    return { status: 'ok', result: `Key pair '${name}' deleted` };
  }
}
