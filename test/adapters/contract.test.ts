import {describe, expect, it} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import {AGENT_IDS} from '../../src/domain/types.js';
import {adapterContract} from './contract.js';
import {FIXTURE_BUILDERS} from './fixtures/index.js';

// The assertions live in contract.ts: one suite, the same for every adapter.
describe.each(AGENT_IDS.map(agent => ({agent})))('adapter contract: $agent', ({agent}) => {
	adapterContract(ADAPTERS[agent], FIXTURE_BUILDERS[agent]);
});

describe('adapter contract coverage', () => {
	it("runs for every adapter the product ships, each with fixtures in its agent's real format", () => {
		expect(Object.keys(ADAPTERS).sort()).toEqual([...AGENT_IDS].sort());
		expect(Object.keys(FIXTURE_BUILDERS).sort()).toEqual([...AGENT_IDS].sort());
	});
});
