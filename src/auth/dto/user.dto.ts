import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMinSize, IsArray, IsBoolean, IsIn, IsInt, IsOptional, Min } from 'class-validator';
import { OptionalText, RequiredText } from '../../common/validation.js';
import type { UserEntity } from '../entities/user.entity.js';
import { ROLES, type Role } from '../roles.js';
import { UserSummaryDto } from './login.dto.js';
import { EXAMPLE } from '../../common/openapi-examples.js';

export class CreateUserDto {
  @RequiredText(1, 256, 'bob')
  username!: string;

  @RequiredText(8, 256, 'a long enough password', 'At least 8 characters')
  password!: string;

  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @IsIn(ROLES, { each: true, message: `roles must each be one of ${ROLES.join(', ')}` })
  @ApiPropertyOptional({ enum: ROLES, isArray: true, default: ['user'], example: ['agent'] })
  roles?: Role[];
}

export class UpdateUserDto {
  @OptionalText(8, 256, 'a new long password', 'At least 8 characters')
  password?: string;

  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @IsIn(ROLES, { each: true, message: `roles must each be one of ${ROLES.join(', ')}` })
  @ApiPropertyOptional({ enum: ROLES, isArray: true, example: ['user'] })
  roles?: Role[];

  @IsOptional()
  @IsBoolean()
  @ApiPropertyOptional({
    description: 'false disables the account; its tokens stop working within 60 s',
    example: false,
  })
  active?: boolean;
}

export class UserIdParam {
  @Type(() => Number)
  @IsInt({ message: 'id must be a positive integer' })
  @Min(1, { message: 'id must be a positive integer' })
  @ApiProperty({ example: EXAMPLE.userId })
  id!: number;
}

export class UserDto extends UserSummaryDto {
  @ApiProperty({ example: true })
  active!: boolean;
}

export class UserListDto {
  @ApiProperty({ type: UserDto, isArray: true })
  items!: UserDto[];
}

export function toUserDto(user: UserEntity): UserDto {
  return { id: user.id, username: user.username, roles: user.roles, active: user.active };
}
