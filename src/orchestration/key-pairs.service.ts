import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error.js';
import type { Caller } from './caller.js';
import { CloudRegistry } from './cloud.registry.js';
import { refOf, type CloudRef } from './dto/replies.dto.js';
import { UnsupportedOperation, type CloudKeyPair, type CloudProvider } from './providers/cloud-provider.js';

/** A key pair's own name: no `.`, so that `<owner>.<name>` at the cloud splits one way only. */
export const KEY_PAIR_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A key pair as its owner sees it: its own name, and whose it is (null: made outside the service). */
export interface OwnedKeyPair extends CloudKeyPair {
  readonly owner: string | null;
}

/**
 * Key pairs of users (API.md 13). At the cloud a key pair is named `<owner's username>.<name>`, so that
 * users sharing one cloud account never collide and each sees and uses only their own; an admin sees
 * and uses all, and names another's key pair by its whole name at the cloud (`bob.laptop`).
 */
@Injectable()
export class KeyPairsService {
  constructor(private readonly registry: CloudRegistry) {}

  async list(cloudName: string, caller: Caller): Promise<{ cloud: CloudRef; keyPairs: OwnedKeyPair[] }> {
    const cloud = this.registry.get(cloudName);
    const keyPairs = (await cloud.listKeyPairs())
      .map(owned)
      .filter((key) => caller.admin || key.owner === caller.username);
    return { cloud: refOf(cloud), keyPairs };
  }

  /** Imports the caller's key; 'conflict' when they have one of that name in this cloud. */
  async import(
    cloudName: string,
    name: string,
    publicKey: string,
    caller: Caller,
  ): Promise<{ cloud: CloudRef; keyPair: OwnedKeyPair }> {
    const cloud = this.registry.get(cloudName);
    try {
      const made = await cloud.importKeyPair(atCloud(caller.username, name), publicKey);
      return { cloud: refOf(cloud), keyPair: owned(made) };
    } catch (error) {
      if (
        error instanceof DomainError &&
        error.kind === 'conflict' &&
        !(error instanceof UnsupportedOperation)
      ) {
        throw new DomainError('conflict', `You have a key pair '${name}' in cloud '${cloud.name}' already`);
      }
      throw error;
    }
  }

  /** Deletes one of the caller's key pairs (an admin: anyone's, by its whole name); else 'not_found'. */
  async delete(cloudName: string, name: string, caller: Caller): Promise<void> {
    const cloud = this.registry.get(cloudName);
    const whole = caller.admin && name.includes('.') ? name : atCloud(caller.username, name);
    try {
      await cloud.deleteKeyPair(whole);
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'not_found') {
        throw new DomainError('not_found', `No key pair '${name}' of yours in cloud '${cloud.name}'`);
      }
      throw error;
    }
  }

  /**
   * The name at the cloud of the `keyname` of a start: one of the caller's key pairs, or for an admin
   * any key pair of the cloud by its whole name. Anything else is 'invalid_input' (a 400).
   */
  async resolve(cloud: CloudProvider, keyname: string, caller: Caller): Promise<string> {
    const names = new Set((await cloud.listKeyPairs()).map((key) => key.name));
    const own = atCloud(caller.username, keyname);
    if (KEY_PAIR_NAME.test(keyname) && names.has(own)) {
      return own;
    }
    if (caller.admin && names.has(keyname)) {
      return keyname;
    }
    const message = `keyname '${keyname}' is not a key pair of yours in cloud '${cloud.name}'`;
    throw new DomainError('invalid_input', message, [{ field: 'keyname', message }]);
  }
}

function atCloud(username: string, name: string): string {
  return `${username}.${name}`;
}

function owned(key: CloudKeyPair): OwnedKeyPair {
  const dot = key.name.lastIndexOf('.');
  return dot > 0 && KEY_PAIR_NAME.test(key.name.slice(dot + 1))
    ? { ...key, name: key.name.slice(dot + 1), owner: key.name.slice(0, dot) }
    : { ...key, owner: null };
}
