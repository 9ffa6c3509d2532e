/**
 * What a channel may be (API.md 6.4), checked at creation: the target's form for its type, the
 * private-address guard for URLs, an e-mail channel only with SMTP_URL set, a secret only on a
 * webhook, known event names. Errors are 400s naming the field.
 */
import { DomainError } from '../common/errors/domain-error.js';
import { privateAddressOf } from '../common/net/address-guard.js';
import type { ChannelType } from './entities/channel.entity.js';
import { EVENT_NAMES, isEventName, normalizeEvents, type EventName } from './events.js';

export interface ChannelRequest {
  type: ChannelType;
  target: string;
  events?: unknown[];
  secret?: string;
}

export interface ChannelSettings {
  allowPrivateTargets: boolean;
  smtpConfigured: boolean;
}

/** Deliberately simple: one @, no spaces or angle brackets; the SMTP server has the last word. */
const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;

export async function checkChannel(
  request: ChannelRequest,
  settings: ChannelSettings,
): Promise<{ target: string; events: EventName[]; secret: string | null }> {
  const events = parseEvents(request.events ?? ['ALL'], 'events');
  if (request.secret !== undefined && request.type !== 'webhook') {
    throw invalid('secret', `only a webhook channel has a secret, not ${request.type}`);
  }
  const target = request.target.trim();
  if (request.type === 'email') {
    if (!settings.smtpConfigured) {
      throw invalid('type', 'e-mail channels are not available: this service has no SMTP_URL configured');
    }
    if (!EMAIL.test(target)) {
      throw invalid('target', 'target must be an e-mail address for an email channel');
    }
    return { target, events, secret: null };
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw invalid('target', `target must be an http or https URL for a ${request.type} channel`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw invalid('target', `target must be an http or https URL for a ${request.type} channel`);
  }
  if (url.username || url.password) {
    throw invalid('target', 'target must not carry a user name or password');
  }
  if (!settings.allowPrivateTargets && (await privateAddressOf(url.hostname)) !== undefined) {
    // The host only: the address a name resolves to would map internal DNS for the caller.
    throw invalid(
      'target',
      `target is on a private or reserved address (${url.hostname}), which this service does not call`,
    );
  }
  return { target: url.toString(), events, secret: request.secret ?? null };
}

/** A non-empty JSON array of event names (EVENT_NAMES). */
export function parseEvents(value: unknown, field: string): EventName[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw invalid(field, `${field} must be a non-empty JSON array of event names`);
  }
  const unknown: unknown = (value as unknown[]).find((item) => !isEventName(item));
  if (unknown !== undefined) {
    throw invalid(
      field,
      `unknown event ${(JSON.stringify(unknown) ?? 'null').slice(0, 80)}: the events are ${EVENT_NAMES.join(', ')}`,
    );
  }
  return normalizeEvents(value as EventName[]);
}

/** A JSON array of UUIDs (at most `max`). */
export function parseUuids(value: unknown, field: string, max: number): string[] {
  if (!Array.isArray(value)) {
    throw invalid(field, `${field} must be a JSON array of notification uuids`);
  }
  if (value.length > max) {
    throw invalid(field, `at most ${max} uuids at once`);
  }
  const bad: unknown = (value as unknown[]).find(
    (item) =>
      typeof item !== 'string' ||
      !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(item),
  );
  if (bad !== undefined) {
    throw invalid(field, `${(JSON.stringify(bad) ?? 'null').slice(0, 80)} is not a UUID`);
  }
  return value as string[];
}

function invalid(field: string, message: string): DomainError {
  return new DomainError('invalid_input', message, [{ field, message }]);
}
