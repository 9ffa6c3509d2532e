import ipaddr from 'ipaddr.js';
import { isRecord } from '../../common/is-record.js';
import { NodeState, type CloudKeyPair, type CloudNode } from './cloud-provider.js';

// What OpenStack's JSON (Nova servers, flavors and key pairs, Neutron floating IPs, error bodies) means in
// our terms: this changes when a cloud's replies do, not when the calls or the token handling change.

/** Nova server status → node state: the one table of this provider (API.md 3.1). */
const NOVA_STATES: ReadonlyMap<string, NodeState> = new Map([
  ['ACTIVE', NodeState.Running],
  ['REBOOT', NodeState.Rebooting],
  ['HARD_REBOOT', NodeState.Rebooting],
  ['DELETED', NodeState.Terminated],
  ['SOFT_DELETED', NodeState.Terminated],
  ['BUILD', NodeState.Pending],
  ['REBUILD', NodeState.Pending],
  ['PASSWORD', NodeState.Pending],
  ['RESCUE', NodeState.Pending],
  ['RESIZE', NodeState.Pending],
  ['VERIFY_RESIZE', NodeState.Pending],
  ['MIGRATING', NodeState.Pending],
  ['SHUTOFF', NodeState.Stopped],
  ['SUSPENDED', NodeState.Suspended],
  ['ERROR', NodeState.Error],
  ['PAUSED', NodeState.Paused],
]);

/** The node state of a Nova server status; anything not in the table is Unknown. */
export function novaState(status: unknown): NodeState {
  return (
    (typeof status === 'string' ? NOVA_STATES.get(status.toUpperCase()) : undefined) ?? NodeState.Unknown
  );
}

const PRIVATE_IPV4_RANGES = new Set(['private', 'loopback', 'linkLocal', 'carrierGradeNat']);
// Libcloud's fallback for addresses it cannot range-check (IPv6): trust the network label or the IP type.
const PUBLIC_NETWORK_LABELS = new Set(['public', 'internet']);

/** True for IPv4 addresses in RFC 1918, loopback, link-local or CGNAT ranges. */
export function isPrivateIpv4(address: string): boolean {
  return (
    ipaddr.IPv4.isValidFourPartDecimal(address) && PRIVATE_IPV4_RANGES.has(ipaddr.IPv4.parse(address).range())
  );
}

/**
 * Splits a Nova `addresses` map (network label → [{addr, version, OS-EXT-IPS:type}]) into public and
 * private IPs as libcloud does: an IPv4 address is private exactly when it is in a private range; an
 * IPv6 address is public when its network is labelled public/internet or it is a floating IP.
 */
export function classifyAddresses(addresses: unknown): { publicIps: string[]; privateIps: string[] } {
  const publicIps: string[] = [];
  const privateIps: string[] = [];
  if (!isRecord(addresses)) {
    return { publicIps, privateIps };
  }
  for (const [label, entries] of Object.entries(addresses)) {
    for (const entry of Array.isArray(entries) ? entries : []) {
      const address = isRecord(entry) ? entry.addr : undefined;
      if (typeof address !== 'string' || address === '') {
        continue;
      }
      const isPublic = ipaddr.IPv4.isValidFourPartDecimal(address)
        ? !isPrivateIpv4(address)
        : PUBLIC_NETWORK_LABELS.has(label) || (isRecord(entry) && entry['OS-EXT-IPS:type'] === 'floating');
      (isPublic ? publicIps : privateIps).push(address);
    }
  }
  return { publicIps, privateIps };
}

/** The CloudNode of a Nova server object; what the state and IPs do not carry stays in `extra`. */
export function toOpenStackNode(server: Record<string, unknown>): CloudNode {
  const { publicIps, privateIps } = classifyAddresses(server.addresses);
  const links = Array.isArray(server.links) ? server.links.filter(isRecord) : [];
  const extra: Record<string, unknown> = {
    status: server.status,
    addresses: server.addresses,
    hostId: server.hostId,
    access_ip: server.accessIPv4,
    access_ipv6: server.accessIPv6,
    tenantId: server.tenant_id,
    userId: server.user_id,
    imageId: idOf(server.image),
    flavorId: idOf(server.flavor),
    uri: links.find((link) => link.rel === 'self')?.href,
    metadata: server.metadata,
    // Tags are sent as server metadata (API.md 13), so the metadata is the node's tags.
    tags: server.metadata,
    security_groups: Array.isArray(server.security_groups)
      ? server.security_groups.filter(isRecord).map((group) => group.name)
      : undefined,
    created: server.created,
    updated: server.updated,
    key_name: server.key_name,
    disk_config: server['OS-DCF:diskConfig'],
    config_drive: server.config_drive,
    availability_zone: server['OS-EXT-AZ:availability_zone'],
    volumes_attached: server['os-extended-volumes:volumes_attached'],
    task_state: server['OS-EXT-STS:task_state'],
    vm_state: server['OS-EXT-STS:vm_state'],
    power_state: server['OS-EXT-STS:power_state'],
    progress: server.progress,
    fault: server.fault,
  };
  return {
    id: idOf(server) ?? '',
    name: typeof server.name === 'string' ? server.name : '',
    state: novaState(server.status),
    publicIps,
    privateIps,
    extra: Object.fromEntries(Object.entries(extra).filter(([, value]) => value !== undefined)),
  };
}

const MAX_UPSTREAM_MESSAGE = 300;

/**
 * The message of an OpenStack error body: Nova `{"badRequest": {"message": …}}`, Keystone
 * `{"error": {"message": …}}`, or a short plain-text body.
 */
export function upstreamMessage(body: unknown): string | undefined {
  let message: string | undefined;
  if (typeof body === 'string') {
    message = body.replace(/<[^>]*>/g, ' ');
  } else if (isRecord(body)) {
    const fault = Object.values(body).find((value) => isRecord(value) && typeof value.message === 'string');
    message =
      typeof body.message === 'string' ? body.message : isRecord(fault) ? String(fault.message) : undefined;
  }
  const compact = message?.replace(/\s+/g, ' ').trim();
  return compact ? compact.slice(0, MAX_UPSTREAM_MESSAGE) : undefined;
}

export interface FloatingIp {
  readonly id: string;
  readonly address: string;
}

export function toFloatingIp(value: unknown): FloatingIp | undefined {
  const id = idOf(value);
  const address = field(value, 'floating_ip_address');
  return id !== undefined && typeof address === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(id)
    ? { id, address }
    : undefined;
}

export function toKeyPair(key: Record<string, unknown>): CloudKeyPair {
  return {
    name: String(key.name),
    fingerprint: typeof key.fingerprint === 'string' ? key.fingerprint : '',
    publicKey: typeof key.public_key === 'string' ? key.public_key.trim() : '',
  };
}

export function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

export function idOf(value: unknown): string | undefined {
  const id = field(value, 'id');
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
}

export function numberOf(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
