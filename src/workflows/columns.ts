import { VERSION_MAX_LENGTH } from '../common/version-label.js';

/**
 * Sizes of the registry's text columns. The entities declare them, and the registration rules and
 * the request DTOs refuse longer values with a 400 instead of a failed insert. The migrations keep
 * their own literal numbers on purpose: a migration is the schema as it was when it ran, and must
 * not change meaning if one of these grows later (that is a new migration).
 */
export const COLUMN_LENGTHS = {
  uuid: 36,
  version: VERSION_MAX_LENGTH,
  name: 512,
  rocLink: 2048,
  sha256: 64,
  rocId: 512,
  path: 1024,
  engine: 64,
  resource: 1024,
  serviceType: 16,
  serviceUrl: 512,
  sourceRef: 255,
  sourceCommit: 64,
  issueType: 128,
  issueName: 256,
  issueDescription: 2048,
  issueSeverity: 16,
  uncheckedReason: 512,
  language: 16,
  registryIdentifier: 64,
  originLink: 2048,
} as const;
