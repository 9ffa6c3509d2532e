/**
 * How the registry learns which CI services a crate may name, without depending on test
 * monitoring: monitoring's (global) module exports this token (`useExisting` its registry of
 * clients) and the registry injects it, optionally. Without monitoring, no service is known and a
 * crate with test instances is refused.
 */
export const TESTING_SERVICE_CATALOG = Symbol('TESTING_SERVICE_CATALOG');

/** A CI service as the crates name it. */
export interface CrateServiceType {
  /** The stored and shown type: the term, lower-cased, without its trailing `Service`. */
  readonly type: string;
  /** The term of the Workflow Testing RO-Crate vocabulary (`https://w3id.org/ro/terms/test#<term>`). */
  readonly crateTerm: string;
}

export interface TestingServiceCatalog {
  /** Every registered CI service, in registration order. */
  serviceTypes(): readonly CrateServiceType[];
}
