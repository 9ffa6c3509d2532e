import { ApiProperty } from '@nestjs/swagger';
import { RequiredText } from '../../common/validation.js';
import { ROLES, type Role } from '../roles.js';

export class LoginDto {
  @RequiredText(1, 256, 'alice')
  username!: string;

  @RequiredText(1, 256, 'correct horse battery staple')
  password!: string;
}

export class UserSummaryDto {
  @ApiProperty({ example: 7 })
  id!: number;

  @ApiProperty({ example: 'alice' })
  username!: string;

  @ApiProperty({ enum: ROLES, isArray: true, example: ['agent'] })
  roles!: Role[];
}

export class LoginResponseDto {
  @ApiProperty({ enum: ['ok'], example: 'ok' })
  status!: 'ok';

  @ApiProperty({
    description: 'HS256 JWT with sub, username, roles, iat, exp, jti',
    example: 'eyJhbGciOiJIUzI1NiJ9…',
  })
  token!: string;

  @ApiProperty({ enum: ['Bearer'], example: 'Bearer' })
  token_type!: 'Bearer';

  @ApiProperty({ description: 'Lifetime of the token in seconds', example: 3600 })
  expires_in!: number;

  @ApiProperty({ type: UserSummaryDto })
  user!: UserSummaryDto;
}
