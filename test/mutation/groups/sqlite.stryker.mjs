import {group} from '../../../stryker.config.mjs';

/** Trace-free reads of agent databases. */
export default group('sqlite', ['src/system/sqliteRead.ts']);
