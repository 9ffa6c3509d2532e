import { Body, Controller, Delete, Get, Param, Put, UseFilters } from '@nestjs/common';
import {
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiUnauthorizedResponse,
  ApiTags,
} from '@nestjs/swagger';
import { ApiAuth } from '../auth/api-auth.decorator.js';
import { TAGS } from '../common/api-tags.js';
import { UserIdParam } from '../auth/dto/user.dto.js';
import { ApiUserIdErrors } from '../auth/user-id-errors.decorator.js';
import { Roles } from '../auth/roles.decorator.js';
import { AuthErrorDto, authErrorExample } from '../common/dto/error-bodies.dto.js';
import { AuthErrorFilter } from '../common/filters/auth-error.filter.js';
import { QuotaDto, SetQuotaDto, toQuotaDto } from './dto/machines.dto.js';
import { QuotasService } from './quotas.service.js';

const QUOTA =
  'Checked at every start against the nodes the user holds (started through the service and not stopped), ' +
  'atomically across copies of the service. A user without a quota of their own has the defaults ' +
  'QUOTA_MAX_NODES, QUOTA_MAX_VCPUS, QUOTA_MAX_RAM_MIB (unset: no limit).';

/** Quotas of users (API.md 13): under `/api/v1/users`, so in area A's shape; admin only. HTTP only. */
@ApiTags(TAGS.usage)
@ApiAuth()
@ApiUnauthorizedResponse({ type: AuthErrorDto, description: 'No valid token' })
@ApiForbiddenResponse({
  type: AuthErrorDto,
  description: 'The caller is not an admin',
  example: authErrorExample(403, 'This operation needs the role admin'),
})
@UseFilters(AuthErrorFilter)
@Roles('admin')
@Controller('api/v1/users/:id/quota')
export class QuotasController {
  constructor(private readonly quotas: QuotasService) {}

  @Get()
  @ApiOperation({
    operationId: 'users-quota-get',
    summary: 'A user’s quota of area C (admin)',
    description: QUOTA,
  })
  @ApiOkResponse({ type: QuotaDto, description: 'The quota: the user’s own, or the defaults (own false)' })
  @ApiUserIdErrors()
  async get(@Param() { id }: UserIdParam): Promise<QuotaDto> {
    return toQuotaDto(await this.quotas.get(id));
  }

  @Put()
  @ApiOperation({
    operationId: 'users-quota-put',
    summary: 'Sets a user’s quota of area C (admin)',
    description: `The limits named change (a number, or null for no limit); the others keep their value. ${QUOTA}`,
  })
  @ApiOkResponse({ type: QuotaDto, description: 'The quota as set' })
  @ApiUserIdErrors('A bad id, or a limit that is not a whole number from 0 or null')
  async set(@Param() { id }: UserIdParam, @Body() body: SetQuotaDto): Promise<QuotaDto> {
    return toQuotaDto(
      await this.quotas.set(id, {
        maxNodes: body.max_nodes,
        maxVcpus: body.max_vcpus,
        maxRamMib: body.max_ram_mib,
      }),
    );
  }

  @Delete()
  @ApiOperation({
    operationId: 'users-quota-delete',
    summary: 'Gives a user the default quota again (admin)',
    description: QUOTA,
  })
  @ApiOkResponse({ type: QuotaDto, description: 'The defaults the user has now' })
  @ApiUserIdErrors()
  async clear(@Param() { id }: UserIdParam): Promise<QuotaDto> {
    return toQuotaDto(await this.quotas.clear(id));
  }
}
