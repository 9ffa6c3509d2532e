import { STATUS_CODES } from 'node:http';
import { HttpException } from '@nestjs/common';
import {
  DomainError,
  httpStatusOf,
  InsufficientScope,
  isCallersMistake,
  type FieldError,
} from './domain-error.js';
import { causes, infrastructureError, pathOf } from './infrastructure.js';

/** An error reduced to what every area's body is built from. */
export interface Problem {
  status: number;
  title: string;
  message: string;
  fields: FieldError[];
  retryAfterSeconds?: number;
  /** A `WWW-Authenticate` challenge to send (RFC 6750's insufficient_scope). */
  challenge?: string;
  /** False for failures we did not anticipate: they are logged with their stack. */
  expected: boolean;
  /** A fault of our own infrastructure that was anticipated: logged at error with this line and the cause. */
  fault?: string;
  /** A 5xx that is the caller's mistake all the same (area C's 500 for an unknown cloud): logged at warn. */
  callersMistake?: boolean;
}

const BODY_TOO_LARGE = 'The request body is larger than 1 MiB';

export function toProblem(exception: unknown): Problem {
  if (exception instanceof DomainError) {
    const status = httpStatusOf(exception.kind);
    return {
      status,
      title: titleOf(status),
      message: exception.message,
      fields: exception.fields,
      retryAfterSeconds: exception.retryAfterSeconds,
      challenge: exception instanceof InsufficientScope ? exception.challenge : undefined,
      expected: true,
      callersMistake: isCallersMistake(exception.kind),
    };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    return {
      status,
      title: titleOf(status),
      message: httpExceptionMessage(exception, status),
      fields: [],
      expected: true,
    };
  }
  const infrastructure = infrastructureError(exception);
  if (infrastructure?.kind === 'insufficient_storage') {
    const path = pathOf(exception);
    return {
      ...toProblem(infrastructure),
      fault: `storage full${path ? ` at ${path}` : ''}: ${errorMessage(exception)}`,
    };
  }
  if (infrastructure) {
    // A DatabaseUnavailableError is logged once per outage where it is detected (src/database),
    // not once per request here; a lock that stayed taken (SQLITE_BUSY) or a failed read is logged.
    const reported = causes(exception).some(
      (cause) => (cause as { code?: unknown }).code === 'DATABASE_UNAVAILABLE',
    );
    return reported
      ? toProblem(infrastructure)
      : { ...toProblem(infrastructure), fault: `database unavailable: ${errorMessage(exception)}` };
  }
  const parserStatus = bodyParserStatus(exception);
  if (parserStatus !== undefined) {
    const message = parserStatus === 413 ? BODY_TOO_LARGE : 'The request body is not valid JSON';
    return { status: parserStatus, title: titleOf(parserStatus), message, fields: [], expected: true };
  }
  return { status: 500, title: titleOf(500), message: 'Internal server error', fields: [], expected: false };
}

export function titleOf(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}

function httpExceptionMessage(exception: HttpException, status: number): string {
  if (status === 413) {
    return BODY_TOO_LARGE;
  }
  const response = exception.getResponse();
  if (typeof response === 'string') {
    return response;
  }
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) {
    return message.join('; ');
  }
  if (typeof message === 'string') {
    return status === 400 && /JSON/i.test(message) ? 'The request body is not valid JSON' : message;
  }
  return exception.message;
}

/** body-parser errors that reach a filter unwrapped carry `type` and `status`. */
function bodyParserStatus(exception: unknown): number | undefined {
  if (typeof exception !== 'object' || exception === null) {
    return undefined;
  }
  const { type, status } = exception as { type?: unknown; status?: unknown };
  if (typeof type !== 'string' || typeof status !== 'number') {
    return undefined;
  }
  return status >= 400 && status < 500 ? status : undefined;
}

function errorMessage(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(error);
}
