import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** Swagger shapes of the three areas' error bodies (the filters in common/filters write them). */
export class AuthErrorDetailDto {
  @ApiProperty({ example: 403 })
  code!: number;

  @ApiProperty({ example: 'Forbidden' })
  title!: string;

  @ApiProperty({ example: 'Wrong username or password, or the account is disabled' })
  message!: string;
}

export class AuthErrorDto {
  @ApiProperty({ type: AuthErrorDetailDto })
  error!: AuthErrorDetailDto;
}

export class FieldErrorDto {
  @ApiProperty({ example: 'version' })
  field!: string;

  @ApiProperty({ example: 'version must be a string' })
  message!: string;
}

export class ProblemDto {
  @ApiProperty({ example: 'about:blank' })
  type!: string;

  @ApiProperty({ example: 'Not Found' })
  title!: string;

  @ApiProperty({ example: 404 })
  status!: number;

  @ApiProperty({ example: 'No workflow 5f1c…' })
  detail!: string;

  @ApiPropertyOptional({ type: FieldErrorDto, isArray: true })
  errors?: FieldErrorDto[];
}

export class EnvelopeErrorDto {
  @ApiProperty({ enum: ['error'], example: 'error' })
  status!: 'error';

  @ApiProperty({ example: "Cloud 'nope' is not valid or the path is wrong" })
  message!: string;

  @ApiProperty({ example: 500 })
  status_code!: number;

  @ApiProperty({ example: 'Server got itself in trouble' })
  status_long_message!: string;

  @ApiProperty({ example: 'Internal Server Error' })
  status_short_message!: string;
}
