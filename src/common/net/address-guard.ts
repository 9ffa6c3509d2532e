import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';

/**
 * True only for globally routable unicast addresses. Loopback, RFC 1918, link-local
 * (which holds the cloud metadata address 169.254.169.254), CGNAT, unique-local IPv6,
 * NAT64/6to4 forms that can embed a private IPv4, multicast and reserved ranges are all refused.
 */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) {
    return false;
  }
  let address = ipaddr.parse(ip);
  if (address.kind() === 'ipv6') {
    const v6 = address as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) {
      address = v6.toIPv4Address();
    } else if (v6.parts.slice(0, 6).every((part) => part === 0)) {
      // The deprecated IPv4-compatible form (::a.b.c.d) is not routed globally; ipaddr.js calls it unicast.
      return false;
    }
  }
  return address.range() === 'unicast';
}

/**
 * The message names the host only: it reaches replies, and the address a name resolves to would
 * map internal DNS for the caller. `address` is kept for logs.
 */
export class PrivateAddressError extends Error {
  readonly code = 'EPRIVATEADDRESS';
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(`${host} resolves to a private or reserved address`);
    this.name = 'PrivateAddressError';
  }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for node:http that refuses private addresses. The check happens on the
 * address the socket will actually connect to, so DNS rebinding between a check and
 * the connection cannot slip through.
 */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) {
      callback(error, []);
      return;
    }
    const refused = addresses.find((entry) => !isPublicAddress(entry.address));
    if (refused) {
      callback(new PrivateAddressError(hostname, refused.address), []);
      return;
    }
    if (options.all) {
      callback(null, addresses);
    } else {
      callback(null, addresses[0].address, addresses[0].family);
    }
  });
}

/**
 * The first private or reserved address `host` (a name or an IP literal) resolves to, or
 * undefined when all are public. A name that does not resolve within 5 s counts as public: it
 * points nowhere today, and the guard of every send checks again.
 */
export async function privateAddressOf(host: string): Promise<string | undefined> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(bare)) {
    return isPublicAddress(bare) ? undefined : bare;
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<LookupAddress[]>((resolve) => {
    timer = setTimeout(() => resolve([]), 5000);
  });
  const found = new Promise<LookupAddress[]>((resolve) => {
    dnsLookup(bare, { all: true, verbatim: true }, (error, addresses) => resolve(error ? [] : addresses));
  });
  try {
    const addresses = await Promise.race([found, timeout]);
    return addresses.find((entry) => !isPublicAddress(entry.address))?.address;
  } finally {
    clearTimeout(timer);
  }
}
