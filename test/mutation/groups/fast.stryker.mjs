import {group} from '../../../stryker.config.mjs';

/** Stop escalation, id checks, the conversations view's in-use rule, plan items, shared-file rewrites and the residual scan. */
export default group('fast', [
	'src/actions/stopSteps.ts',
	'src/actions/stopSequence.ts',
	'src/sync/conversationUse.ts',
	'src/adapters/types.ts',
	'src/adapters/common/plan.ts',
	'src/adapters/common/rewrite.ts',
	'src/adapters/common/residual.ts',
]);
