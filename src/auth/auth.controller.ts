import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Post,
  Req,
  Res,
  UseFilters,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiPayloadTooLargeResponse,
  ApiOperation,
  ApiTooManyRequestsResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AuthErrorFilter } from '../common/filters/auth-error.filter.js';
import { ApiAuth } from './api-auth.decorator.js';
import { AuthService, type IssuedToken } from './auth.service.js';
import { LoginDto, LoginResponseDto } from './dto/login.dto.js';
import { Public } from './public.decorator.js';
import { clearSessionCookie, extractToken, setSessionCookie } from './token-carriers.js';
import { TAGS } from '../common/api-tags.js';
import { AuthErrorDto, authErrorExample } from '../common/dto/error-bodies.dto.js';

/** What a login can answer besides a token, with the bodies the service sends. */
function ApiLoginErrors(): MethodDecorator {
  return applyDecorators(
    ApiBadRequestResponse({
      type: AuthErrorDto,
      description: 'A field is missing, not a string or too long',
      example: authErrorExample(400, 'username must be a string; password must be a string'),
    }),
    ApiForbiddenResponse({
      type: AuthErrorDto,
      description: 'Wrong username or password, or a disabled account (one answer for the three)',
      example: authErrorExample(403, 'Wrong username or password, or the account is disabled'),
    }),
    ApiTooManyRequestsResponse({
      type: AuthErrorDto,
      description: 'Too many failed attempts from this address or for this username; see Retry-After',
      example: authErrorExample(429, 'Too many failed login attempts; try again later'),
    }),
  );
}

@UseFilters(AuthErrorFilter)
@Public()
@ApiTags(TAGS.auth)
@Controller('api/v1/auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ operationId: 'auth-post', summary: 'Exchange a username and password for a token' })
  @ApiOkResponse({ type: LoginResponseDto, description: 'Also sets the HttpOnly `session` cookie' })
  @ApiLoginErrors()
  async login(
    @Body() body: LoginDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<LoginResponseDto> {
    return this.reply(await this.auth.login(body.username, body.password, request.ip ?? 'unknown'), response);
  }

  @Get()
  @ApiOperation({
    operationId: 'auth-get',
    summary: 'Same as POST, for clients of the original that send the JSON body with GET',
  })
  @ApiBody({ type: LoginDto })
  @ApiOkResponse({ type: LoginResponseDto, description: 'Also sets the HttpOnly `session` cookie' })
  @ApiLoginErrors()
  async loginWithGet(
    @Body() body: LoginDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<LoginResponseDto> {
    return this.login(body, request, response);
  }

  @ApiAuth({ apiKey: false })
  @Delete()
  @HttpCode(204)
  @ApiOperation({
    operationId: 'auth-delete',
    summary: 'Log out: revoke the presented token and clear the session cookie',
  })
  @ApiNoContentResponse({ description: 'Always, even without a valid token' })
  @ApiPayloadTooLargeResponse({ type: AuthErrorDto, description: 'A request body over the limit' })
  async logout(@Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<void> {
    await this.auth.logout(extractToken(request)?.token);
    clearSessionCookie(response, this.auth.sessionCookieOptions());
  }

  private reply(issued: IssuedToken, response: Response): LoginResponseDto {
    setSessionCookie(response, issued.token, this.auth.sessionCookieOptions());
    response.vary('X-Auth-Token');
    return {
      status: 'ok',
      token: issued.token,
      token_type: 'Bearer',
      expires_in: issued.expiresIn,
      user: issued.user,
    };
  }
}
