import type { Request } from 'express';
import passport from 'passport';
import type { AuthUser, TokenCarrier } from './auth-user.js';
import { extractApiKey, extractToken } from './token-carriers.js';
import { NOT_THIS_KIND } from './token-strategy.js';

type Verify = (
  request: Request,
  token: string,
  via: TokenCarrier,
  done: (error: unknown, user?: AuthUser) => void,
) => void;

/**
 * The passport side of a TokenStrategy whose tokens carry a mark (their first characters): a
 * marked token from any carrier of a person's token is this strategy's to decide; any other
 * fails with NOT_THIS_KIND, so that the guard's chain goes on. Subclassed through
 * `PassportStrategy(MarkedTokenStrategy)`, the subclass passing its name and mark test to `super`.
 */
export class MarkedTokenStrategy extends passport.Strategy {
  constructor(
    name: string,
    private readonly isMarked: (token: string) => boolean,
    private readonly verify: Verify,
  ) {
    super();
    this.name = name;
  }

  override authenticate(request: Request): void {
    // A request with an API key is the API key strategy's alone.
    const found = extractApiKey(request).kind === 'none' ? extractToken(request) : undefined;
    if (!found || !this.isMarked(found.token)) {
      this.fail(NOT_THIS_KIND, 401);
      return;
    }
    this.verify(request, found.token, found.via, (error, user) => {
      if (error || !user) {
        this.error(error ?? new Error('the token check returned no caller'));
        return;
      }
      this.success(user);
    });
  }
}
