import type {AgentId, Conversation, Finding, Pane, SessionRecord} from '../domain/types.js';
import {reportedId} from '../domain/paneAgent.js';
import {describeRow, isActive, listSome, samePath, validId, type DriftWorld, type Exclusion, type Screened} from './world.js';

/** The candidates of one running unpinned row after the SPEC 5 rules, or why they are unknown. */
export type CandidateVerdict =
	| {
			readonly kind: 'known';
			readonly ids: readonly string[];
			/** What was seen and left out, and why (evidence): every other row's pin, then the first few others. */
			readonly excluded: readonly string[];
			/** How many more were left out than `excluded` describes. */
			readonly unshown: number;
			readonly problems: readonly string[];
	  }
	| {readonly kind: 'unknown'; readonly reason: string};

/**
 * How many left-out conversations the evidence describes besides other rows' pins: a busy cwd
 * holds hundreds made before the session started, and a line for each said nothing more.
 */
export const SHOWN_EXCLUSIONS = 10;

/** Ids pinned by any other active row of the same agent: pinning one would make a duplicate pin. */
function claimedElsewhere(world: DriftWorld, row: SessionRecord): Map<string, string> {
	const claimed = new Map<string, string>();
	for (const other of world.input.sessions) {
		if (other.id === row.id || other.agent !== row.agent || other.agentSessionId === null || !isActive(other)) continue;
		if (!claimed.has(other.agentSessionId)) claimed.set(other.agentSessionId, other.name);
	}
	return claimed;
}

/** Why a conversation is not a candidate, before looking at other rows' pins (or undefined). */
function exclusion(world: DriftWorld, row: SessionRecord, agent: AgentId, conv: Conversation, realCwd?: string): Exclusion | undefined {
	if (!samePath(conv.cwd, row.cwd) && !(realCwd !== undefined && samePath(conv.cwd, realCwd))) return 'elsewhere';
	if (conv.createdAt < row.epoch) return 'older';
	if (conv.parentId !== undefined) return 'child';
	if (!validId(world, agent, conv.id)) return 'invalid';
	return undefined;
}

/** The evidence line for a conversation left out. */
function exclusionText(why: Exclusion, row: SessionRecord, agent: AgentId, conv: Conversation): string {
	switch (why) {
		case 'elsewhere':
			return `${conv.id}: in ${conv.cwd}, not ${row.cwd}`;
		case 'older':
			return `${conv.id}: created ${new Date(conv.createdAt).toISOString()}, before the session started (${new Date(row.epoch).toISOString()})`;
		case 'child':
			return `${conv.id}: a child of ${conv.parentId ?? '?'}, not a conversation of its own`;
		case 'invalid':
			return `${JSON.stringify(conv.id)}: not a valid ${agent} id`;
	}
}

/**
 * The pin-independent part of the rules, per conversation list (the discovery cache hands the same
 * array while a cwd is unchanged), row cwd, epoch and agent, kept in the world's screens (the
 * drift memo's): a busy cwd holds a thousand conversations, and re-judging (and re-describing)
 * each for every unpinned row on every refresh cost more than the rest of the drift pass.
 */
function screen(world: DriftWorld, row: SessionRecord, agent: AgentId, conversations: readonly Conversation[], realCwd?: string): Screened {
	let byRow = world.screens.get(conversations);
	if (!byRow) world.screens.set(conversations, (byRow = new Map()));
	const key = `${agent}\0${row.cwd}\0${row.epoch}\0${realCwd ?? ''}`;
	let screened = byRow.get(key);
	if (!screened) {
		screened = conversations.map(conv => {
			const why = exclusion(world, row, agent, conv, realCwd);
			return why === undefined ? {conv} : {conv, why};
		});
		byRow.set(key, screened);
	}
	return screened;
}

/**
 * SPEC 5 candidate rules: only conversations in the row's cwd, created at or after its epoch,
 * parents only, not claimed by another row. Applied here even though discovery was asked the
 * same, so a lax adapter can never widen the set.
 */
export function candidatesFor(world: DriftWorld, row: SessionRecord, agent: AgentId): CandidateVerdict {
	const facts = world.input.facts.get(row.id);
	const found = facts?.candidates;
	if (found === undefined) return {kind: 'unknown', reason: 'its conversations were not looked up'};
	if (!found.ok) return {kind: 'unknown', reason: found.error};
	const claimed = claimedElsewhere(world, row);
	// A set, not a list scan per conversation: a busy cwd holds a thousand conversations.
	const ids = new Set<string>();
	const pinned: string[] = [];
	const others: string[] = [];
	let unshown = 0;
	for (const {conv, why} of screen(world, row, agent, found.value.conversations, facts?.realCwd)) {
		const owner = why === undefined ? claimed.get(conv.id) : undefined;
		if (owner !== undefined) pinned.push(`${conv.id}: already pinned by ${owner}`);
		else if (why === undefined) ids.add(conv.id);
		else if (others.length < SHOWN_EXCLUSIONS) others.push(exclusionText(why, row, agent, conv));
		else unshown++;
	}
	return {kind: 'known', ids: [...ids].sort(), excluded: [...pinned, ...others], unshown, problems: found.value.problems};
}

/** Running unpinned rows whose pane is fine: the ones `unpinned` judges. */
export function isUnpinnedLive(row: SessionRecord): boolean {
	return row.status === 'running' && row.agentSessionId === null;
}

/** For each candidate id, the unpinned rows that could take it: an id two rows want is not pinned to either. */
export function contestedIds(verdicts: ReadonlyMap<number, {row: SessionRecord; verdict: CandidateVerdict}>): Map<string, string[]> {
	const wanted = new Map<string, string[]>();
	for (const {row, verdict} of verdicts.values()) {
		if (verdict.kind !== 'known') continue;
		for (const id of verdict.ids) {
			const key = `${row.agent}\0${id}`;
			wanted.set(key, [...(wanted.get(key) ?? []), row.name]);
		}
	}
	return wanted;
}

function base(row: SessionRecord, pane: Pane | undefined): Pick<Finding, 'kind' | 'sessionId' | 'sessionName' | 'sessionVersion' | 'paneId'> {
	return {
		kind: 'unpinned',
		sessionId: row.id,
		sessionName: row.name,
		sessionVersion: row.version,
		...(pane ? {paneId: pane.id} : {}),
	};
}

/** A pin the mux itself reports for the row's pane: stronger than any disk candidate. */
function fromMux(world: DriftWorld, row: SessionRecord, agent: AgentId, pane: Pane | undefined): Finding | undefined {
	const id = pane ? reportedId(pane, agent) : undefined;
	if (!pane || id === undefined || !validId(world, agent, id)) return undefined;
	if (claimedElsewhere(world, row).has(id)) return undefined;
	return {
		...base(row, pane),
		message: `${row.name} has no pinned conversation; ${world.input.mux ?? 'the mux'} reports ${id} in its pane`,
		evidence: [describeRow(row), `${world.input.mux ?? 'mux'}: pane ${pane.id} reports ${agent} session ${id}`],
		candidates: [id],
		fix: {type: 'pin', sessionId: row.id, agentSessionId: id, named: 'mux'},
	};
}

/** A pin the agent's own evidence gives for the row's pane (its live record, argv, its own file held open). */
function fromEvidence(world: DriftWorld, row: SessionRecord, agent: AgentId, pane: Pane | undefined): Finding | undefined {
	const evidence = pane ? world.input.paneEvidence?.get(pane.id) : undefined;
	if (!pane || evidence?.agent !== agent) return undefined;
	const ids = evidence.ids.filter(id => validId(world, agent, id) && !claimedElsewhere(world, row).has(id));
	if (ids.length !== 1) return undefined;
	const id = ids[0] as string;
	return {
		...base(row, pane),
		message: `${row.name} has no pinned conversation; its ${world.agents[agent].label} process is on ${id}`,
		evidence: [describeRow(row), ...evidence.seen.map(line => `${agent} evidence: ${line}`)],
		candidates: [id],
		fix: {type: 'pin', sessionId: row.id, agentSessionId: id, named: 'process'},
	};
}

/** The `unpinned` finding for a running row with no pin (SPEC 5): pin one, list several, inform on none. */
export function unpinnedFinding(
	world: DriftWorld,
	row: SessionRecord,
	agent: AgentId,
	pane: Pane | undefined,
	verdict: CandidateVerdict,
	contested: ReadonlyMap<string, readonly string[]>,
): Finding {
	const muxPin = fromMux(world, row, agent, pane) ?? fromEvidence(world, row, agent, pane);
	if (muxPin) return muxPin;
	const head = describeRow(row);
	if (verdict.kind === 'unknown') {
		return {...base(row, pane), message: `${row.name} has no pinned conversation, and its candidates are unknown: ${verdict.reason}`, evidence: [head]};
	}
	const more = verdict.unshown > 0 ? [`not a candidate: ${verdict.unshown} more conversation(s), not listed`] : [];
	const evidence = [head, ...verdict.excluded.map(line => `not a candidate: ${line}`), ...more, ...verdict.problems.map(p => `could not read: ${p}`)];
	const rivals = verdict.ids.flatMap(id => (contested.get(`${row.agent}\0${id}`) ?? []).filter(name => name !== row.name));
	if (verdict.ids.length === 0) {
		return {...base(row, pane), level: 'info', message: `${row.name}: no conversation yet in ${row.cwd} since it started`, evidence};
	}
	const list = listSome(verdict.ids);
	if (verdict.ids.length > 1 || rivals.length > 0 || verdict.problems.length > 0) {
		const why =
			verdict.ids.length > 1
				? `${verdict.ids.length} conversations could be ${row.name}'s: ${list}; pick one`
				: rivals.length > 0
					? `${row.name} and ${listSome([...new Set(rivals)].sort())} could each own ${list}; pick which`
					: `${row.name} could be ${list}, but part of the store was unreadable; pick it yourself`;
		return {...base(row, pane), message: why, evidence, candidates: verdict.ids};
	}
	const only = verdict.ids[0] as string;
	return {
		...base(row, pane),
		message: `${row.name} has no pinned conversation; exactly one candidate: ${only}`,
		evidence: [...evidence, `candidate: ${only} (the only ${agent} conversation in ${row.cwd} since ${new Date(row.epoch).toISOString()})`],
		candidates: [only],
		fix: {type: 'pin', sessionId: row.id, agentSessionId: only},
	};
}
