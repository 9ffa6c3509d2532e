/**
 * The registries' side of "a SEEK installation is one provider" (API.md 15 and 10.1): the accounts
 * a registry made for its users, by the registry's uri and its id of the person. Provided by the
 * registries feature under REGISTRY_PEOPLE (it imports auth, so auth reaches it by token).
 */
export interface RegistryPeople {
  /** The account of the registry (by `uri`) made for its user `externalId`; undefined when none. */
  accountOf(uri: string, externalId: string): Promise<number | undefined>;
  /**
   * Records that the registry's user `externalId` is the account `userId`, so that what the
   * registry submits for them is theirs. Nothing when there is no such registry, or when the
   * registry already knows that person (as this account or, refused earlier, another).
   */
  adopt(uri: string, externalId: string, userId: number): Promise<void>;
}

export const REGISTRY_PEOPLE = Symbol('REGISTRY_PEOPLE');
