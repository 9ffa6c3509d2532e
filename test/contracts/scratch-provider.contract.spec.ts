import { ScratchProvider } from '../extensions/scratch-cloud.js';
import { cloudProviderContract, cloudProviderMachinesContract } from './cloud-provider.contract.js';

// The test-only provider of docs/extending.md passes the contract every provider passes; it keeps no
// key pairs and has no public addresses, and says so.
const subject = (): ReturnType<Parameters<typeof cloudProviderContract>[1]> =>
  Promise.resolve({ provider: new ScratchProvider('lab', 'lab-a'), image: 'img-debian', size: 'tiny' });

cloudProviderContract('scratch (test-only extension)', subject);
cloudProviderMachinesContract('scratch (test-only extension)', subject);
