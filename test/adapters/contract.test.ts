import {describe} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import type {AgentId} from '../../src/domain/types.js';
import {adapterContract} from './contract.js';
import {FIXTURE_BUILDERS} from './fixtures/index.js';

const agents = (Object.keys(FIXTURE_BUILDERS) as AgentId[]).map(agent => ({agent}));

describe.each(agents)('adapter contract: $agent', ({agent}) => {
	const build = FIXTURE_BUILDERS[agent];
	if (build) adapterContract(ADAPTERS[agent], build);
});
