import type { Request } from 'express';
import type { AppConfig } from '../config/app-config.js';

/** The base of links in replies: PUBLIC_BASE_URL, else what the request came to (Express applies TRUST_PROXY to both parts). */
export function baseUrlOf(config: AppConfig, request: Request): string {
  return config.publicBaseUrl ?? `${request.protocol}://${request.host}`;
}

/**
 * The base of links sent where no request is answered (notifications, e-mails, webhooks):
 * PUBLIC_BASE_URL, else this process on its own port (right for a service used where it runs).
 */
export function unrequestedBaseUrlOf(config: AppConfig): string {
  return config.publicBaseUrl ?? `http://localhost:${config.port}`;
}

/**
 * A stored link made absolute: a path (a link to this service, stored where no request told its
 * address, as a managed run's log) is put after `baseUrl`; a URL elsewhere is kept as it is.
 */
export function absoluteLinkOf(link: string, baseUrl: string): string {
  return link.startsWith('/') && !link.startsWith('//') ? `${baseUrl}${link}` : link;
}
