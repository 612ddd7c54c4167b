import { describeStoreContract } from '../../../test/store/store-contract.ts';
import { InMemoryStore } from './memory-store.ts';

describeStoreContract('InMemoryStore', () => new InMemoryStore());
