import { DummyProvider } from '../../src/orchestration/providers/dummy.provider.js';
import { InMemoryDummyCloudStore } from '../../src/orchestration/providers/in-memory-dummy-cloud.store.js';
import { cloudProviderContract, cloudProviderMachinesContract } from './cloud-provider.contract.js';

const subject = (): ReturnType<Parameters<typeof cloudProviderContract>[1]> =>
  Promise.resolve({
    provider: new DummyProvider('default', new InMemoryDummyCloudStore()),
    image: '1',
    size: '2',
    // OpenSSH's own fingerprint.
    fingerprints: { rsa: /^SHA256:[A-Za-z0-9+/]{43}$/, ed25519: /^SHA256:[A-Za-z0-9+/]{43}$/ },
    addresses: true,
  });

cloudProviderContract('dummy (in-memory store)', subject);
cloudProviderMachinesContract('dummy (in-memory store)', subject);
