import { DomainError } from '../common/errors/domain-error.js';

/**
 * A link that could not be used: a 400 for a link the caller gave (API.md 2.1). `timedOut` tells a
 * link that did not answer in time apart, for a caller that turns an upstream's failures into
 * its own (a registry's crate: 504 then, 502 otherwise).
 */
export class LinkFailure extends DomainError {
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super('invalid_input', message);
    this.name = 'LinkFailure';
  }
}

/**
 * A refusal caused by the outside world for a while (a 5xx, a timeout, an unreachable host, a
 * rate limit), not by what the link names: a registration by hand still answers it as the 400 of
 * API.md 2.1, and a followed repository tries again at its next poll, not before `retryAt`.
 */
export class UpstreamUnavailable extends LinkFailure {
  constructor(
    message: string,
    /** A rate limit's end, when the upstream said. */
    readonly retryAt?: Date,
    timedOut = false,
  ) {
    super(message, timedOut);
    this.name = 'UpstreamUnavailable';
  }
}
