import {group} from '../../../stryker.config.mjs';

/** The purge action (refusals, recheck, marks, audit) and the row deletion of agent databases. */
export default group('purge', ['src/actions/purge.ts', 'src/adapters/common/purgeDb.ts', 'src/adapters/common/sqlitePurge.ts']);
