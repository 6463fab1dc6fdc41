import type {SessionRecord} from '../../src/domain/types.js';

let nextId = 1;

/** A registry row with sensible defaults for component tests. */
export function session(overrides: Partial<SessionRecord> & Pick<SessionRecord, 'name'>): SessionRecord {
	const id = nextId++;
	return {
		id,
		agent: 'claude',
		cwd: '/home/u/src/app',
		mux: 'tmux',
		paneId: `%${id}`,
		agentSessionId: null,
		status: 'running',
		epoch: 0,
		createdAt: 0,
		updatedAt: 0,
		version: 1,
		extra: {},
		...overrides,
	};
}
