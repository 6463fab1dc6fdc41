/**
 * The checks a park makes before it types anything (issue 28), as pure functions of what was
 * seen: park.ts gathers the facts (registry, mux, screen, process table, the agent's files) and
 * asks `judgePark`. Each check has a name, so a refused park says which one refused it, and each
 * is tested alone (test/actions/parkChecks.test.ts).
 */
import type {ComposerState} from '../adapters/types.js';
import type {ProcessRef, SessionStatus, StatusDetection} from '../domain/types.js';
import {SHELLS} from './stopCapture.js';

/** The checks, in the order they are made (cheapest and most telling first). */
export const PARK_CHECKS = ['registry', 'pane', 'focus', 'idle', 'soak', 'composer', 'work', 'pinned', 'resume'] as const;
export type ParkCheck = (typeof PARK_CHECKS)[number];

/** Why a check refused: its name and one line a user understands. */
export interface ParkRefusal {
	readonly check: ParkCheck;
	readonly why: string;
}

export interface ParkFacts {
	readonly name: string;
	readonly status: SessionStatus;
	/** Another mam-tui's park of this row, still fresh. */
	readonly claimedBy?: number;
	/** The pane, when the row's recorded pane is there and runs the agent; else why not. */
	readonly pane: {readonly id: string; readonly isSelf: boolean} | {readonly missing: string};
	/** The panes the user may be looking at; undefined when the mux cannot tell. */
	readonly focused: ReadonlySet<string> | undefined;
	/** The agent's status by its own evidence (record, OSC, title, screen; herdr's word on herdr). */
	readonly detection: StatusDetection | undefined;
	/** Seconds since the conversation (or one of its sub-agents) was last written; undefined when unknown. */
	readonly idleSeconds: number | undefined;
	readonly soakSeconds: number;
	/** The composer as the adapter's screen reader sees it; undefined when the adapter has no reader. */
	readonly composer: ComposerState | undefined;
	/** What the mux reports (herdr `blocked` means a dialog, whatever the screen shows). */
	readonly muxBlocked: boolean;
	/** Processes under the agent that are doing work now (see `workingProcesses`). */
	readonly work: readonly ProcessRef[];
	readonly pin: string | null;
	/** The adapter's word on the pinned conversation on disk; undefined when not checked. */
	readonly onDisk: {readonly ok: boolean; readonly why?: string} | undefined;
	/** The resume argv is known (the adapter can resume this agent). */
	readonly canResume: boolean;
}

function refuse(check: ParkCheck, why: string): ParkRefusal {
	return {check, why};
}

function composerRefusal(composer: ComposerState | undefined, muxBlocked: boolean): ParkRefusal | undefined {
	if (muxBlocked) return refuse('composer', 'the mux reports the agent blocked on an approval');
	if (!composer) return refuse('composer', "nothing can read this agent's composer, so a draft or a dialog cannot be ruled out");
	switch (composer.kind) {
		case 'empty':
			return undefined;
		case 'draft':
			return refuse('composer', `the composer holds a ${composer.lines}-line draft`);
		case 'blocked':
			return refuse('composer', `an approval dialog is on screen ("${composer.prompt}")`);
		case 'unknown':
			return refuse('composer', `${composer.reason}, so a draft or a dialog cannot be ruled out`);
	}
}

/** The first check that refuses, or undefined when every one passes. */
export function judgePark(facts: ParkFacts): ParkRefusal | undefined {
	if (facts.status !== 'running') return refuse('registry', `${facts.name} is ${facts.status}, not running`);
	if (facts.claimedBy !== undefined) return refuse('registry', `another mam-tui (pid ${facts.claimedBy}) is parking ${facts.name}`);
	if ('missing' in facts.pane) return refuse('pane', facts.pane.missing);
	if (facts.pane.isSelf) return refuse('pane', `pane ${facts.pane.id} is the one mam-tui runs in`);
	if (!facts.focused) return refuse('focus', `cannot tell whether you are looking at pane ${facts.pane.id}`);
	if (facts.focused.has(facts.pane.id)) return refuse('focus', `pane ${facts.pane.id} is the one you are looking at`);
	const status = facts.detection?.status ?? 'unknown';
	if (status !== 'idle') {
		const evidence = facts.detection ? ` (${facts.detection.evidence})` : '';
		return refuse('idle', `the agent is ${status}${evidence}, not idle`);
	}
	if (facts.idleSeconds === undefined) return refuse('soak', 'cannot tell how long the agent has been idle: its conversation was not found on disk');
	if (facts.idleSeconds < facts.soakSeconds) {
		return refuse('soak', `idle for ${Math.floor(facts.idleSeconds)} s only, by its conversation's last write; parks wait ${facts.soakSeconds} s`);
	}
	const composer = composerRefusal(facts.composer, facts.muxBlocked);
	if (composer) return composer;
	if (facts.work.length > 0) {
		const what = facts.work.slice(0, 3).map(p => `pid ${p.pid} (${p.argv.slice(0, 3).join(' ') || p.name})`);
		return refuse('work', `the agent runs ${facts.work.length === 1 ? 'a tool' : `${facts.work.length} tools`}: ${what.join(', ')}`);
	}
	if (facts.pin === null) return refuse('pinned', 'no conversation is pinned yet');
	if (!facts.onDisk?.ok) return refuse('pinned', `conversation ${facts.pin} does not verify on disk${facts.onDisk?.why ? `: ${facts.onDisk.why}` : ''}`);
	if (!facts.canResume) return refuse('resume', 'this agent has no known resume command');
	return undefined;
}

/** How close to the agent's own start a helper must start to count as resident (MCP servers start with it). */
export const RESIDENT_START_TICKS = 15 * 100;

export interface WorkRules {
	/** The adapter's resident children (names or argv words: codex `app-server`, opencode `serve`). */
	readonly residentChildren: readonly string[];
	/** The agent's own processes (a wrapper's child, a re-exec): never work themselves. */
	readonly isAgent: (proc: ProcessRef) => boolean;
}

function namedResident(proc: ProcessRef, rules: WorkRules): boolean {
	return rules.residentChildren.some(word => proc.name === word || proc.argv.slice(0, 3).includes(word));
}

/**
 * The processes under `agent` that are work: a tool, a sub-agent, a background shell. A resident
 * helper is not work, nor anything it runs: one the adapter names, or one (not a shell) that
 * started with the agent (an MCP server). `tree` is the pane's tree (any order).
 */
export function workingProcesses(tree: readonly ProcessRef[], agent: ProcessRef, rules: WorkRules): ProcessRef[] {
	const children = new Map<number, ProcessRef[]>();
	for (const p of tree) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
	const work: ProcessRef[] = [];
	const visit = (parent: ProcessRef, agentStart: number): void => {
		for (const child of children.get(parent.pid) ?? []) {
			if (rules.isAgent(child)) {
				visit(child, child.startTime);
				continue;
			}
			const resident = namedResident(child, rules) || (!SHELLS.has(child.name) && child.startTime - agentStart <= RESIDENT_START_TICKS);
			if (resident) continue;
			work.push(child);
		}
	};
	visit(agent, agent.startTime);
	return work;
}
