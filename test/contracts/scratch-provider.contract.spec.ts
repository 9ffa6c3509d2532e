import { ScratchProvider } from '../extensions/scratch-cloud.js';
import { cloudProviderContract } from './cloud-provider.contract.js';

// The test-only provider of docs/extending.md passes the contract every provider passes.
cloudProviderContract('scratch (test-only extension)', () =>
  Promise.resolve({ provider: new ScratchProvider('lab', 'lab-a'), image: 'img-debian', size: 'tiny' }),
);
