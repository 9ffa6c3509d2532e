import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, UseFilters } from '@nestjs/common';
import {
  ApiBody,
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiUnauthorizedResponse,
  ApiTags,
} from '@nestjs/swagger';
import { AuthErrorDto } from '../common/dto/error-bodies.dto.js';
import { AuthErrorFilter } from '../common/filters/auth-error.filter.js';
import { ApiAuth } from './api-auth.decorator.js';
import { ApiUserIdErrors } from './user-id-errors.decorator.js';
import type { AuthUser } from './auth-user.js';
import { CurrentUser } from './current-user.decorator.js';
import {
  CreateUserDto,
  toUserDto,
  UpdateUserDto,
  UserDto,
  UserIdParam,
  UserListDto,
} from './dto/user.dto.js';
import { Roles } from './roles.decorator.js';
import { UsersService } from './users.service.js';
import { TAGS } from '../common/api-tags.js';
import { authErrorExample } from '../common/dto/error-bodies.dto.js';

@ApiAuth()
@ApiUnauthorizedResponse({ type: AuthErrorDto, description: 'No valid token' })
@ApiForbiddenResponse({
  type: AuthErrorDto,
  description: 'The caller is not an admin',
  example: authErrorExample(403, 'This operation needs the role admin'),
})
@UseFilters(AuthErrorFilter)
@Roles('admin')
@ApiTags(TAGS.users)
@Controller('api/v1/users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Post()
  @ApiOperation({ operationId: 'users-post', summary: 'Create a user (admin)' })
  @ApiCreatedResponse({ type: UserDto, description: 'The new user' })
  @ApiBadRequestResponse({
    type: AuthErrorDto,
    description: 'A username or password missing, too short or too long, or an unknown role',
    example: authErrorExample(400, 'username must be a string; password must be a string'),
  })
  @ApiConflictResponse({
    type: AuthErrorDto,
    description: 'The username is taken',
    example: authErrorExample(409, "The username 'bob' is taken"),
  })
  async create(@Body() body: CreateUserDto): Promise<UserDto> {
    return toUserDto(await this.users.create(body.username, body.password, body.roles));
  }

  @Get()
  @ApiOperation({ operationId: 'users-get', summary: 'List users (admin)' })
  @ApiOkResponse({ type: UserListDto, description: 'Every user' })
  async list(): Promise<UserListDto> {
    return { items: (await this.users.list()).map(toUserDto) };
  }

  @Get(':id')
  @ApiOperation({ operationId: 'users-get-by-id', summary: 'Read one user (admin)' })
  @ApiOkResponse({ type: UserDto, description: 'The user' })
  @ApiUserIdErrors()
  async get(@Param() { id }: UserIdParam): Promise<UserDto> {
    return toUserDto(await this.users.get(id));
  }

  @Patch(':id')
  @ApiOperation({
    operationId: 'users-patch',
    summary: 'Change a password, roles or the active flag (admin); existing tokens follow within 60 s',
  })
  @ApiBody({
    type: UpdateUserDto,
    examples: { roles: { summary: 'New roles', value: { roles: ['user', 'agent'] } } },
  })
  @ApiOkResponse({ type: UserDto, description: 'The user as changed' })
  @ApiUserIdErrors('A bad id, password or role')
  @ApiConflictResponse({
    type: AuthErrorDto,
    description: 'An admin may not disable or demote themselves',
    example: authErrorExample(409, 'An admin cannot disable or demote their own account'),
  })
  async update(
    @Param() { id }: UserIdParam,
    @Body() body: UpdateUserDto,
    @CurrentUser() caller: AuthUser,
  ): Promise<UserDto> {
    return toUserDto(await this.users.update(id, body, caller.id));
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'users-delete', summary: 'Delete a user (admin)' })
  @ApiNoContentResponse({ description: 'The user is deleted, with their tokens and keys' })
  @ApiUserIdErrors()
  @ApiConflictResponse({
    type: AuthErrorDto,
    description: 'Own account, or the user still owns workflows',
    example: authErrorExample(409, 'An admin cannot delete their own account'),
  })
  async remove(@Param() { id }: UserIdParam, @CurrentUser() caller: AuthUser): Promise<void> {
    await this.users.remove(id, caller.id);
  }
}
