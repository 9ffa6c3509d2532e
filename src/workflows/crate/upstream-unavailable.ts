import { DomainError } from '../../common/errors/domain-error.js';

/**
 * A refusal caused by the outside world for a while (a 5xx, a timeout, an unreachable host, a
 * rate limit), not by what the link names: a registration by hand still answers it as the 400 of
 * API.md 2.1, and a followed repository tries again at its next poll, not before `retryAt`.
 */
export class UpstreamUnavailable extends DomainError {
  constructor(
    message: string,
    /** A rate limit's end, when the upstream said. */
    readonly retryAt?: Date,
  ) {
    super('invalid_input', message);
    this.name = 'UpstreamUnavailable';
  }
}
