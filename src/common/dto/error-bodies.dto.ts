import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { titleOf } from '../errors/problem.js';

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

/** An area A error body as its filter writes it, for a response's `example`. */
export function authErrorExample(status: number, message: string): AuthErrorDto {
  return { error: { code: status, title: titleOf(status), message } };
}

/**
 * An area B problem document as its filter writes it, for a response's `example`: `fields` are
 * the members a validation failure names (their messages joined are the detail).
 */
export function problemExample(status: number, detail: string, fields: FieldErrorDto[] = []): ProblemDto {
  return {
    type: 'about:blank',
    title: titleOf(status),
    status,
    detail: fields.length > 0 ? fields.map((field) => field.message).join('; ') : detail,
    ...(fields.length > 0 ? { errors: fields } : {}),
  };
}

/** A validation failure of area B naming one member. */
export function invalidMemberExample(field: string, message: string): ProblemDto {
  return problemExample(400, message, [{ field, message }]);
}
