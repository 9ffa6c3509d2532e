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

/**
 * The text fields of a form POST sent as `application/x-www-form-urlencoded` or as
 * `multipart/form-data` (RFC 8058's one-click unsubscribe: mail providers send either), read by
 * the WHATWG form reader of Node's fetch. Any other media type, or a body that is not what its
 * type says, is a 400; no body, no fields.
 */
export async function postedFields(request: Request & { rawBody?: Buffer }): Promise<URLSearchParams> {
  const bytes = request.rawBody;
  if (bytes === undefined || bytes.length === 0) {
    return new URLSearchParams();
  }
  if (request.is('application/x-www-form-urlencoded')) {
    return new URLSearchParams(bytes.toString('utf8'));
  }
  if (!request.is('multipart/form-data')) {
    throw new DomainError(
      'invalid_input',
      'Send the form as application/x-www-form-urlencoded or multipart/form-data',
    );
  }
  let form: FormData;
  try {
    form = await new Response(bytes, {
      headers: { 'content-type': request.headers['content-type'] ?? '' },
    }).formData();
  } catch {
    throw new DomainError('invalid_input', 'The multipart/form-data body cannot be read');
  }
  const fields = new URLSearchParams();
  for (const [name, value] of form) {
    if (typeof value === 'string') {
      fields.append(name, value);
    }
  }
  return fields;
}
