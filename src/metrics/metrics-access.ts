import { createHash, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { DomainError } from '../common/errors/domain-error.js';

/** `/metrics` is open unless METRICS_TOKEN is set; then it takes exactly that bearer token. */
@Injectable()
export class MetricsAccess {
  private readonly expected?: Buffer;

  constructor(config: AppConfig) {
    this.expected = config.metricsToken ? digest(config.metricsToken) : undefined;
  }

  check(authorization: string | undefined): void {
    if (!this.expected) {
      return;
    }
    const offered = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    // Digests have equal lengths, so the comparison takes the same time whatever was sent.
    if (!offered || !timingSafeEqual(digest(offered), this.expected)) {
      throw new DomainError('unauthorized', 'The metrics need `Authorization: Bearer <METRICS_TOKEN>`');
    }
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
