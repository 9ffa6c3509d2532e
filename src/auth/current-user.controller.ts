import { Controller, Get, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiUnauthorizedResponse, ApiTags } from '@nestjs/swagger';
import { ProblemDto } from '../common/dto/error-bodies.dto.js';
import { ProblemDetailsFilter } from '../common/filters/problem-details.filter.js';
import { ApiAuth } from './api-auth.decorator.js';
import type { AuthUser } from './auth-user.js';
import { CurrentUser } from './current-user.decorator.js';
import { RequireScope } from './scopes.js';
import { UserSummaryDto } from './dto/login.dto.js';
import { TAGS } from '../common/api-tags.js';

/** `/users/current` belongs to area B's paths, so its errors are problem documents. */
@ApiAuth()
@UseFilters(ProblemDetailsFilter)
@ApiTags(TAGS.users)
@Controller('users/current')
export class CurrentUserController {
  @Get()
  @RequireScope('user.profile')
  @ApiOperation({ operationId: 'users-get-current', summary: 'The caller: id, username and roles' })
  @ApiOkResponse({ type: UserSummaryDto, description: 'The user the token or key belongs to' })
  @ApiUnauthorizedResponse({ type: ProblemDto, description: 'No valid token or API key' })
  current(@CurrentUser() user: AuthUser): UserSummaryDto {
    return { id: user.id, username: user.username, roles: user.roles };
  }
}
