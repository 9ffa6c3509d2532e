import { STATUS_CODES } from 'node:http';
import { DomainError } from '../../common/errors/domain-error.js';
import {
  OutboundError,
  readBody,
  sendRequest,
  type OutboundRequest,
  type OutboundResponse,
} from '../../common/net/http-client.js';
import { parseRateLimit } from '../../common/net/rate-limit.js';
import { UpstreamUnavailable } from '../../crates/index.js';

/** The largest JSON answer read from a host's API: a repository's, a commit's or a page of refs is a few KiB. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** How a repository host's API is named in the failures it causes. */
export interface HostWords {
  /** The host's name: `GitHub`. */
  host: string;
  /** What its 401 refused: `GITHUB_TOKEN`. */
  credential: string;
  /** The detail of a 403 or 429 that carries no rate limit, when the host means something by it. */
  refusal?: (status: number, what: string) => string;
}

/**
 * An answer other than the one expected, about `what` was asked. A rate limit (with its end), a
 * 5xx and a refused credential may pass: UpstreamUnavailable. Any other status is about what was
 * asked, and refuses the registration like an unreachable link does (API.md 2.1: 400).
 */
export function answerFailure(words: HostWords, response: OutboundResponse, what: string): DomainError {
  const { status } = response;
  if (status === 401) {
    return new UpstreamUnavailable(`${words.host} refused ${words.credential} (401 Unauthorized)`);
  }
  const limitedUntil = parseRateLimit(status, response.headers, new Date());
  if (limitedUntil) {
    return new UpstreamUnavailable(
      `${words.host} limited the rate of requests (${status}) until ${limitedUntil.toISOString()}`,
      limitedUntil,
    );
  }
  if (words.refusal && (status === 403 || status === 429)) {
    return upstreamRefusal(words.refusal(status, what));
  }
  const phrase = STATUS_CODES[status];
  const detail = `${words.host} answered ${status}${phrase ? ` ${phrase}` : ''} for ${what}`;
  return status >= 500 ? new UpstreamUnavailable(detail) : upstreamRefusal(detail);
}

/**
 * A request that got no answer: a timeout or a network failure may pass (UpstreamUnavailable); a
 * refused address or redirect is the setting's fault and stays so.
 */
export function sendFailure(words: HostWords, error: OutboundError, timeoutMs: number): DomainError {
  if (error.reason === 'timeout') {
    return new UpstreamUnavailable(
      `${words.host}'s API did not answer within ${Math.round(timeoutMs / 1000)} s`,
    );
  }
  const detail = `${words.host}'s API is unreachable (${error.message})`;
  return error.reason === 'unreachable' ? new UpstreamUnavailable(detail) : upstreamRefusal(detail);
}

/** Sends a request to a host's API; one that gets no answer fails as sendFailure says. */
export async function sendToHost(
  words: HostWords,
  url: string,
  request: OutboundRequest,
): Promise<OutboundResponse> {
  try {
    return await sendRequest(url, request);
  } catch (error) {
    throw error instanceof OutboundError ? sendFailure(words, error, request.timeoutMs) : error;
  }
}

/**
 * A 200 answer's JSON. Any other answer fails as answerFailure says; a body that is not JSON (or
 * past MAX_ANSWER_BYTES) refuses, and one cut off fails as sendFailure says.
 */
export async function readJsonAnswer(
  words: HostWords,
  response: OutboundResponse,
  what: string,
  timeoutMs: number,
): Promise<unknown> {
  if (response.status !== 200) {
    response.body.resume();
    throw answerFailure(words, response, what);
  }
  try {
    return JSON.parse((await readBody(response.body, MAX_ANSWER_BYTES)).toString('utf8')) as unknown;
  } catch (error) {
    throw error instanceof OutboundError
      ? sendFailure(words, error, timeoutMs)
      : upstreamRefusal(`${words.host} answered ${what} with something that is not JSON`);
  }
}

/** A host's failure refuses the registration like an unreachable link does (API.md 2.1: 400, the detail says which). */
export function upstreamRefusal(detail: string): DomainError {
  return new DomainError('invalid_input', detail);
}
