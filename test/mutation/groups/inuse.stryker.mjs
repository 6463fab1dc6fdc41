import {group} from '../../../stryker.config.mjs';

/** Who uses a conversation: argv, open files, projects, and never ourselves. */
export default group('inuse', ['src/adapters/common/inUse.ts', 'src/adapters/common/liveEvidence.ts']);
