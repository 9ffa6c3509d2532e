import type { Request } from 'express';
import type { AppConfig } from '../config/app-config.js';

/** The base of links in replies: PUBLIC_BASE_URL, else what the request came to (Express applies TRUST_PROXY to both parts). */
export function baseUrlOf(config: AppConfig, request: Request): string {
  return config.publicBaseUrl ?? `${request.protocol}://${request.host}`;
}
