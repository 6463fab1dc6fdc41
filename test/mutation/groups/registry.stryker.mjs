import {group} from '../../../stryker.config.mjs';

/** The registry's compare-and-set and its reads and writes. */
export default group('registry', ['src/registry/registry.ts']);
