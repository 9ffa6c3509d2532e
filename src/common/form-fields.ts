import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { DomainError } from './errors/domain-error.js';

/**
 * The fields of an HTML form's POST (`application/x-www-form-urlencoded`). configureApp parses
 * only JSON and keeps every other body as bytes, so a form reaches nothing but the handlers that
 * ask for it with this decorator; any other media type is a 400. No body: no fields.
 */
export const FormFields = createParamDecorator(
  (_data: unknown, context: ExecutionContext): URLSearchParams => {
    const request = context.switchToHttp().getRequest<Request & { rawBody?: Buffer }>();
    const bytes = request.rawBody;
    if (bytes === undefined || bytes.length === 0) {
      return new URLSearchParams();
    }
    if (!request.is('application/x-www-form-urlencoded')) {
      throw new DomainError('invalid_input', 'Send the form as application/x-www-form-urlencoded');
    }
    return new URLSearchParams(bytes.toString('utf8'));
  },
);
