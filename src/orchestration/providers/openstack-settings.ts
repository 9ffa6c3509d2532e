import type { CloudSettings } from '../../config/clouds-file.js';
import { settingsReader } from './provider-settings.js';

export const OPENSTACK_TYPE = 'openstack';

export type EndpointInterface = 'public' | 'internal' | 'admin';

/** The settings of one `type: openstack` cloud of CLOUDS_FILE, validated. */
export interface OpenStackSettings {
  /** Keystone v3 base, e.g. `https://keystone.example.org:5000/v3`. */
  readonly authUrl: string;
  readonly username: string;
  readonly password: string;
  readonly userDomainName: string;
  readonly projectName: string;
  readonly projectDomainName: string;
  /** Catalog region; the first endpoint of the interface when unset. */
  readonly region?: string;
  readonly interface: EndpointInterface;
  /** Network id new servers are attached to; Nova picks ("auto") when unset. */
  readonly network?: string;
  /** Id of the external network floating IPs are allocated from; no public addresses when unset. */
  readonly floatingNetwork?: string;
}

/** Validates a cloud's settings; throws ConfigError (setting CLOUDS_FILE) naming the cloud and the key. */
export function parseOpenStackSettings(cloud: CloudSettings): OpenStackSettings {
  const { optional, required, problem } = settingsReader(cloud, OPENSTACK_TYPE);
  const authUrl = required('auth_url').replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]/i.test(authUrl) || !URL.canParse(authUrl)) {
    throw problem(`needs 'auth_url' to be an http(s) URL`);
  }
  const endpointInterface = optional('interface') ?? 'public';
  if (endpointInterface !== 'public' && endpointInterface !== 'internal' && endpointInterface !== 'admin') {
    throw problem(`needs 'interface' to be public, internal or admin`);
  }
  return {
    // Keystone's base is often written without its version; the token API lives under /v3.
    authUrl: /\/v3$/.test(authUrl) ? authUrl : `${authUrl}/v3`,
    username: required('username'),
    password: required('password'),
    userDomainName: optional('user_domain_name') ?? 'Default',
    projectName: required('project_name'),
    projectDomainName: optional('project_domain_name') ?? 'Default',
    region: optional('region'),
    interface: endpointInterface,
    network: optional('network'),
    floatingNetwork: optional('floating_network'),
  };
}
