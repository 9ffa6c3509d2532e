import { DummyProvider } from '../../src/orchestration/providers/dummy.provider.js';
import { InMemoryDummyCloudStore } from '../../src/orchestration/providers/in-memory-dummy-cloud.store.js';
import { cloudProviderContract } from './cloud-provider.contract.js';

cloudProviderContract('dummy (in-memory store)', () =>
  Promise.resolve({
    provider: new DummyProvider('default', new InMemoryDummyCloudStore()),
    image: '1',
    size: '2',
  }),
);
