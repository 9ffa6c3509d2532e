import type { NextFunction, Request, Response } from 'express';
import { DomainError } from './errors/domain-error.js';

/** Deeper than any body the API defines (3 or 4 levels) by far; deep enough for any metadata a client sends. */
export const MAX_JSON_DEPTH = 64;

/** The nesting depth of a parsed JSON value, found without recursion (the point is not to overflow the stack). */
export function exceedsDepth(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (typeof current !== 'object' || current === null) {
      continue;
    }
    if (depth > limit) {
      return true;
    }
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * Refuses a JSON body nested deeper than MAX_JSON_DEPTH before anything walks it recursively
 * (class-transformer would overflow the stack: a 500). Thrown errors take the path's area shape.
 */
export function rejectDeepJson(request: Request, _response: Response, next: NextFunction): void {
  if (!Buffer.isBuffer(request.body) && exceedsDepth(request.body, MAX_JSON_DEPTH)) {
    next(new DomainError('invalid_input', `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`));
    return;
  }
  next();
}
