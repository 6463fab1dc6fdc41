import fs from 'node:fs';
import {ADAPTERS} from '../adapters/index.js';
import type {AdapterContext, AgentAdapter} from '../adapters/types.js';
import {err, messageOf, ok, type Result} from '../domain/result.js';
import {isAgentId, type AgentId, type Pane, type ProcessRef, type ResumeState, type SessionRecord} from '../domain/types.js';
import type {Multiplexer} from '../mux/types.js';
import {snapshotTable} from '../system/processes.js';
import {collectPaneEvidence} from '../sync/paneEvidence.js';
import {createStatusProbe} from '../sync/liveStatus.js';
import {paneAgent} from '../sync/snapshot.js';
import type {CandidateFacts, DriftInput, SessionFacts} from './input.js';

/** Where collection gets its world from; everything is injected so tests use fakes and temp homes. */
export interface CollectSources {
	/** The registry rows (a Registry satisfies this). */
	readonly registry: {list(): readonly SessionRecord[]};
	/** The live multiplexer, or null when none could be selected. */
	readonly mux: Multiplexer | null;
	/** Why `mux` is null (shown as a note). */
	readonly muxProblem?: string;
	/** Home, env, exec, process table and clock for the adapters. */
	readonly ctx: AdapterContext;
	readonly adapters?: Readonly<Record<AgentId, AgentAdapter>>;
}

async function livePanes(sources: CollectSources): Promise<{panes: readonly Pane[] | null; problem?: string}> {
	if (!sources.mux) return {panes: null, problem: sources.muxProblem ?? 'no multiplexer'};
	try {
		const panes = await sources.mux.listPanes();
		// The agents' own statuses too: where they disagree with herdr's, drift says so (status-disagrees).
		const adapters = sources.adapters ?? ADAPTERS;
		return {panes: await createStatusProbe({ctx: sources.ctx, mux: sources.mux, agentOf: pane => paneAgent(adapters, pane)}).detect(panes)};
	} catch (error) {
		return {panes: null, problem: messageOf(error)};
	}
}

async function processTable(ctx: AdapterContext): Promise<readonly ProcessRef[] | null> {
	try {
		return await ctx.processes.list();
	} catch {
		return null;
	}
}

function realCwd(cwd: string): string | undefined {
	try {
		const real = fs.realpathSync(cwd);
		return real === cwd ? undefined : real;
	} catch {
		return undefined; // a vanished cwd: the literal path is all there is
	}
}

function knownAdapter(adapters: Readonly<Record<AgentId, AgentAdapter>>, agent: string): AgentAdapter | undefined {
	return isAgentId(agent) && Object.hasOwn(adapters, agent) ? adapters[agent] : undefined;
}

/** One discover per (agent, cwd) pair, since the earliest epoch among its rows; each row filters by its own epoch later. */
async function discoverCandidates(
	rows: readonly SessionRecord[],
	adapters: Readonly<Record<AgentId, AgentAdapter>>,
	ctx: AdapterContext,
): Promise<Map<number, Result<CandidateFacts, string>>> {
	const groups = new Map<string, {adapter: AgentAdapter; cwd: string; rows: SessionRecord[]}>();
	for (const row of rows) {
		const adapter = knownAdapter(adapters, row.agent);
		if (!adapter || row.status !== 'running' || row.agentSessionId !== null) continue;
		const key = `${row.agent}\0${row.cwd}`;
		const group = groups.get(key) ?? {adapter, cwd: row.cwd, rows: []};
		group.rows.push(row);
		groups.set(key, group);
	}
	const out = new Map<number, Result<CandidateFacts, string>>();
	await Promise.all(
		[...groups.values()].map(async group => {
			const since = Math.min(...group.rows.map(r => r.epoch));
			let fact: Result<CandidateFacts, string>;
			try {
				const found = await group.adapter.discover(ctx, {cwd: group.cwd, since, includeChildren: false});
				fact = ok({conversations: found.conversations, problems: found.problems});
			} catch (error) {
				fact = err(`${group.adapter.label} discovery failed: ${messageOf(error)}`);
			}
			for (const row of group.rows) out.set(row.id, fact);
		}),
	);
	return out;
}

/** verify(pin, cwd) for every active pinned row; a throw becomes `unknown`, never a crash. */
async function verifyPins(
	rows: readonly SessionRecord[],
	adapters: Readonly<Record<AgentId, AgentAdapter>>,
	ctx: AdapterContext,
): Promise<Map<number, ResumeState>> {
	const cache = new Map<string, Promise<ResumeState>>();
	const out = new Map<number, ResumeState>();
	await Promise.all(
		rows.map(async row => {
			const adapter = knownAdapter(adapters, row.agent);
			const pin = row.agentSessionId;
			if (!adapter || pin === null || row.status === 'purged') return;
			const key = `${row.agent}\0${pin}\0${row.cwd}`;
			let pending = cache.get(key);
			if (!pending) {
				pending = adapter.verify(ctx, pin, row.cwd).catch(
					(error: unknown): ResumeState => ({kind: 'unknown', reason: `${adapter.label} verify failed: ${messageOf(error)}`}),
				);
				cache.set(key, pending);
			}
			out.set(row.id, await pending);
		}),
	);
	return out;
}

/**
 * Gather the drift engine's input: registry rows, live panes (null when the mux is unreachable),
 * adapter facts per row and the process table. Adapter errors become per-row `unknown` facts.
 */
export async function collectDriftInput(sources: CollectSources): Promise<DriftInput> {
	const adapters = sources.adapters ?? ADAPTERS;
	const sessions = sources.registry.list();
	const [live, processes, candidates, verified] = await Promise.all([
		livePanes(sources),
		processTable(sources.ctx),
		discoverCandidates(sessions, adapters, sources.ctx),
		verifyPins(sessions, adapters, sources.ctx),
	]);
	// Panes an active pinned row already accounts for need no evidence of what they run.
	const accounted = new Set(sessions.filter(r => r.status === 'running' && r.agentSessionId !== null && r.paneId !== null).map(r => r.paneId as string));
	const wanted = live.panes?.filter(p => !accounted.has(p.id)) ?? null;
	// One pass over /proc (and its open files) for every pane's evidence.
	const paneEvidence = await collectPaneEvidence(wanted, adapters, {...sources.ctx, processes: snapshotTable(sources.ctx.processes)});
	const facts = new Map<number, SessionFacts>();
	for (const row of sessions) {
		const real = realCwd(row.cwd);
		const candidate = candidates.get(row.id);
		const verify = verified.get(row.id);
		facts.set(row.id, {
			...(real ? {realCwd: real} : {}),
			...(candidate ? {candidates: candidate} : {}),
			...(verify ? {verify} : {}),
		});
	}
	return {
		sessions,
		mux: sources.mux?.kind ?? null,
		panes: live.panes,
		...(live.problem ? {muxProblem: live.problem} : {}),
		facts,
		processes,
		paneEvidence,
	};
}
