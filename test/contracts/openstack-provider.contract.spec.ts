import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type AppConfig } from '../../src/config/app-config.js';
import { OpenStackProviderFactory } from '../../src/orchestration/providers/openstack.provider.js';
import { FAKE_EXTERNAL_NETWORK_ID, OpenStackFake } from '../fakes/openstack-fake.js';
import { cloudProviderContract, cloudProviderMachinesContract } from './cloud-provider.contract.js';

let dataDir: string;
let config: AppConfig;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'openstack-contract-'));
  config = loadConfig({ DATA_DIR: dataDir, JWT_SECRET: 'x'.repeat(40), UPSTREAM_TIMEOUT_SECONDS: '1' });
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

cloudProviderContract('openstack (loopback Keystone/Nova/Glance fake)', async () => {
  const fake = await OpenStackFake.start();
  const provider = new OpenStackProviderFactory(config).create(fake.cloudSettings('ostack'));
  return { provider, image: '7', size: '2', dispose: () => fake.close() };
});

cloudProviderContract('openstack on a fixed network, paged lists', async () => {
  const fake = await OpenStackFake.start({ serverPageSize: 1, imagePageSize: 2 });
  const provider = new OpenStackProviderFactory(config).create(
    fake.cloudSettings('ostack_net', { network: '3b1c3c35-0a6b-4d8e-9d8e-6f3a1c2b7e01' }),
  );
  return { provider, image: '1', size: '8', dispose: () => fake.close() };
});

// Nova reports the MD5 fingerprint (RFC 4716) of every key it imports.
const MD5 = /^([0-9a-f]{2}:){15}[0-9a-f]{2}$/;

cloudProviderMachinesContract('openstack (Nova key pairs, Neutron floating IPs)', async () => {
  const fake = await OpenStackFake.start();
  const provider = new OpenStackProviderFactory(config).create(
    fake.cloudSettings('ostack', { floating_network: FAKE_EXTERNAL_NETWORK_ID }),
  );
  return {
    provider,
    image: '7',
    size: '2',
    securityGroup: 'web',
    fingerprints: { rsa: MD5, ed25519: MD5 },
    addresses: true,
    dispose: () => fake.close(),
  };
});
