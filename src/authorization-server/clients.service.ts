import { Injectable } from '@nestjs/common';
import { AuthService } from '../auth/auth.service.js';
import { OAuthError } from '../auth/oauth2/oauth-error.js';
import type { ClientAuthentication } from '../auth/oauth2/token-request.js';
import { Clock } from '../common/clock.js';
import { DomainError } from '../common/errors/domain-error.js';
import { AppSecretHasher, generateClientId, generateClientSecret } from './app-secrets.js';
import { ClientsRepository } from './clients.repository.js';
import type { OAuthClientEntity } from './entities/oauth-client.entity.js';
import { REDIRECT_URIS, redirectUriProblem } from './redirect-uris.js';

/** Applications one user may register: enough for anyone's tools, not a table anyone can fill. */
export const MAX_CLIENTS_PER_USER = 100;
const CREATE_ATTEMPTS = 3;
const BAD_CLIENT = 'Client authentication failed: unknown client or wrong secret';

export interface NewClientRequest {
  name: string;
  redirectUris: string[];
  confidential: boolean;
}

export interface CreatedClient {
  client: OAuthClientEntity;
  /** A confidential client's secret: shown once, never stored. */
  clientSecret?: string;
}

/** The applications people register (API.md 15), and their authentication at the token endpoint. */
@Injectable()
export class ClientsService {
  constructor(
    private readonly repo: ClientsRepository,
    private readonly hasher: AppSecretHasher,
    private readonly auth: AuthService,
    private readonly clock: Clock,
  ) {}

  /**
   * Registers a client for the user. Throws invalid_input for a redirect URI that cannot be one
   * (see redirectUriProblem), conflict past MAX_CLIENTS_PER_USER.
   */
  async create(userId: number, request: NewClientRequest): Promise<CreatedClient> {
    const fields = request.redirectUris.flatMap((uri, index) => {
      const problem = redirectUriProblem(uri);
      return problem === undefined
        ? []
        : [{ field: `redirect_uris[${index}]`, message: `redirect_uris[${index}] ${problem}` }];
    });
    if (fields.length > 0) {
      throw new DomainError('invalid_input', fields[0].message, fields);
    }
    if ((await this.repo.countOf(userId)) >= MAX_CLIENTS_PER_USER) {
      throw new DomainError(
        'conflict',
        `A user registers at most ${MAX_CLIENTS_PER_USER} applications; delete one first`,
      );
    }
    const clientSecret = request.confidential ? generateClientSecret() : undefined;
    for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
      const client = await this.repo.create({
        clientId: generateClientId(),
        userId,
        name: request.name,
        redirectUris: [...new Set(request.redirectUris)].slice(0, REDIRECT_URIS.max),
        confidential: request.confidential,
        clientSecretHash: clientSecret === undefined ? null : this.hasher.hash(clientSecret),
        createdAt: new Date(Math.floor(this.clock.nowMs() / 1000) * 1000),
      });
      if (client) {
        return { client, clientSecret };
      }
    }
    // 144 random bits colliding three times running is a broken random source, not bad luck.
    throw new Error('could not find a free client id');
  }

  list(userId: number): Promise<OAuthClientEntity[]> {
    return this.repo.listOf(userId);
  }

  /** Deletes one of the user's clients and, with it, every token it holds; not_found when there is none. */
  async remove(userId: number, clientId: string): Promise<void> {
    if (!(await this.repo.remove(userId, clientId))) {
      throw new DomainError('not_found', `No application ${clientId.slice(0, 64)}`);
    }
  }

  /** The client named by an authorization request (it may be unknown: the caller says so). */
  find(clientId: string): Promise<OAuthClientEntity | null> {
    return this.repo.findByClientId(clientId);
  }

  /**
   * Authenticates a client at the token endpoint (RFC 6749 3.2.1): a confidential client by its
   * secret, a public one by its id alone (and never with a secret). Failures count against the
   * login limit, per address and per client id, as a registry client's do.
   */
  async authenticate(
    presented: ClientAuthentication | undefined,
    address: string,
  ): Promise<OAuthClientEntity> {
    if (presented === undefined) {
      throw new OAuthError(
        'invalid_client',
        401,
        'The client is required: send client_id (and client_secret when it has one)',
      );
    }
    const admission = await this.auth.enterAttempt(address, [`client:${presented.clientId}`]);
    if (!admission.admitted) {
      throw new OAuthError(
        'temporarily_unavailable',
        429,
        'Too many failed client authentications; try again later',
        false,
        admission.retryAfterMs / 1000,
      );
    }
    let failed = false;
    try {
      const client = await this.repo.findByClientId(presented.clientId);
      const secret = presented.clientSecret;
      // Compared even without a client or secret, so that what is missing does not answer faster.
      const matches = this.hasher.matches(secret ?? '', client?.clientSecretHash ?? '0'.repeat(64));
      const valid =
        client !== null && (client.confidential ? secret !== undefined && matches : secret === undefined);
      if (!valid) {
        failed = true;
        throw new OAuthError('invalid_client', 401, BAD_CLIENT, presented.basic);
      }
      return client;
    } finally {
      admission.leave(failed);
    }
  }
}
