import path from 'node:path';
import {adapterFor} from '../adapters/index.js';
import {messageOf} from '../domain/result.js';
import type {Finding, Fix, SessionRecord} from '../domain/types.js';
import {isRecordedPane} from '../drift/paneJoin.js';
import {adoptedByExtra, parkedExtra, withPaneServer} from '../registry/extra.js';
import {ConflictError, type Registry, type SessionPatch} from '../registry/registry.js';
import {detectDrift} from '../drift/detect.js';
import type {AgentKnowledge, DriftInput} from '../drift/input.js';

/**
 * The registry operations a fix may use. There is no delete here, and fixes get no mux, exec or
 * process table: a fix can only write registry rows and the audit log.
 */
export type FixRegistry = Pick<Registry, 'getById' | 'list' | 'findByPin' | 'update' | 'insert' | 'uniqueName' | 'audit' | 'transaction'>;

export type FixStatus = 'applied' | 'refused' | 'failed';

/** How a fix went, as another machine answers `drift.fix`: `applied`, or why not, in its words. */
export type FixAnswer = Pick<FixOutcome, 'status' | 'message'>;

export interface FixOutcome {
	readonly finding: Finding;
	readonly fix: Fix;
	readonly status: FixStatus;
	/** The row the fix wrote (or meant to write). */
	readonly sessionName?: string;
	/** One line: what changed, or why nothing did. */
	readonly message: string;
}

export interface FixOptions {
	/** The epoch given to adopted rows (ms). */
	readonly now?: () => number;
}

/** Refusals carry their reason to the audit log and the outcome; they are not errors. */
class Refusal extends Error {}

function patchFor(fix: Exclude<Fix, {type: 'adopt-pane'}>, row: SessionRecord): SessionPatch {
	switch (fix.type) {
		case 'mark-stopped':
			if (row.status !== 'running') throw new Refusal(`${row.name} is ${row.status} now, not running`);
			return {status: 'stopped', ...(fix.clearPane ? {paneId: null} : {})};
		case 'mark-running':
			if (row.status !== 'stopped' && row.status !== 'parked') throw new Refusal(`${row.name} is ${row.status} now, not stopped`);
			// A parked row started again by hand is running: what its park recorded no longer holds.
			return {status: 'running', paneId: fix.paneId, ...(fix.mux ? {mux: fix.mux} : {}), extra: withPaneServer(parkedExtra.remove(row.extra), fix.server)};
		case 'pin':
			if (row.agentSessionId !== null) throw new Refusal(`${row.name} was pinned to ${row.agentSessionId} meanwhile`);
			return {agentSessionId: fix.agentSessionId};
		case 'repin':
			if (row.agentSessionId !== fix.from) throw new Refusal(`${row.name} is pinned to ${row.agentSessionId ?? 'nothing'} now, not ${fix.from}`);
			return {agentSessionId: fix.to};
	}
}

/** The id a fix would pin must be valid for the agent and not pinned by any other active row. */
function assertPinnable(registry: FixRegistry, agent: string, id: string, selfId?: number): void {
	const adapter = adapterFor(agent);
	if (!adapter) throw new Refusal(`unknown agent ${JSON.stringify(agent)}`);
	if (id.length === 0 || id.length > 256 || !adapter.idPattern.test(id)) throw new Refusal(`${JSON.stringify(id)} is not a valid ${agent} id`);
	const owner = registry.findByPin(adapter.id, id).find(r => r.id !== selfId && r.status !== 'purged');
	if (owner) throw new Refusal(`${id} is already pinned by ${owner.name}`);
}

function pinnedId(fix: Fix): string | undefined {
	if (fix.type === 'pin') return fix.agentSessionId;
	if (fix.type === 'repin') return fix.to;
	return undefined;
}

function changed(before: SessionRecord, patch: SessionPatch): {old: Record<string, unknown>; new: Record<string, unknown>} {
	const keys = Object.keys(patch) as Array<keyof SessionPatch>;
	return {old: Object.fromEntries(keys.map(k => [k, before[k]])), new: Object.fromEntries(keys.map(k => [k, patch[k]]))};
}

function applySessionFix(registry: FixRegistry, finding: Finding, fix: Exclude<Fix, {type: 'adopt-pane'}>): FixOutcome {
	const row = registry.getById(fix.sessionId);
	if (!row) throw new Refusal(`session #${fix.sessionId} no longer exists`);
	const pin = pinnedId(fix);
	if (pin !== undefined) assertPinnable(registry, row.agent, pin, row.id);
	const patch = patchFor(fix, row);
	// Compare-and-set: the version seen at detection, so a row changed since then is left alone.
	registry.update(row.id, patch, finding.sessionVersion ?? row.version);
	const diff = changed(row, patch);
	registry.audit({
		session: row.name,
		action: 'drift-fix',
		step: fix.type,
		outcome: 'ok',
		detail: {kind: finding.kind, message: finding.message, ...diff, evidence: finding.evidence},
	});
	return {finding, fix, status: 'applied', sessionName: row.name, message: describeChange(row.name, diff)};
}

function describeChange(name: string, diff: {old: Record<string, unknown>; new: Record<string, unknown>}): string {
	const parts = Object.keys(diff.new).map(k => `${k} ${JSON.stringify(diff.old[k] ?? null)} → ${JSON.stringify(diff.new[k] ?? null)}`);
	return `${name}: ${parts.join(', ')}`;
}

function adoptPane(registry: FixRegistry, finding: Finding, fix: Extract<Fix, {type: 'adopt-pane'}>, now: () => number): FixOutcome {
	if (!path.isAbsolute(fix.cwd)) throw new Refusal(`pane cwd ${JSON.stringify(fix.cwd)} is not an absolute path`);
	if (fix.agentSessionId !== undefined) assertPinnable(registry, fix.agent, fix.agentSessionId);
	// A stopped row may still name the pane it once ran in; only a running row owns it now, and
	// two rows never claim one pane (of the same server: a restarted server's %1 is another pane).
	const pane = {id: fix.paneId, ...(fix.server ? {server: fix.server} : {})};
	const taken = registry.list().find(r => r.status === 'running' && isRecordedPane(r, pane, fix.mux ?? null));
	if (taken) throw new Refusal(`pane ${fix.paneId} is already ${taken.name}'s`);
	const name = registry.uniqueName(`${fix.agent}-${path.basename(fix.cwd) || 'root'}`);
	const row = registry.insert({
		name,
		agent: fix.agent,
		cwd: fix.cwd,
		mux: fix.mux ?? null,
		paneId: fix.paneId,
		agentSessionId: fix.agentSessionId ?? null,
		status: 'running',
		// The agent process's start: a conversation it wrote before the adoption is still its own.
		epoch: fix.epoch ?? now(),
		extra: withPaneServer(adoptedByExtra.write({}, 'drift'), fix.server),
	});
	const created = {name, agent: row.agent, cwd: row.cwd, mux: row.mux, paneId: row.paneId, agentSessionId: row.agentSessionId, status: row.status};
	registry.audit({
		session: name,
		action: 'drift-fix',
		step: fix.type,
		outcome: 'ok',
		detail: {kind: finding.kind, message: finding.message, old: null, new: created, evidence: finding.evidence},
	});
	return {
		finding,
		fix,
		status: 'applied',
		sessionName: name,
		message: `${name}: adopted pane ${fix.paneId} (${fix.agent} in ${fix.cwd}${fix.agentSessionId ? `, pinned ${fix.agentSessionId}` : ''})`,
	};
}

function auditSession(registry: FixRegistry, fix: Fix): string | null {
	return fix.type === 'adopt-pane' ? null : (registry.getById(fix.sessionId)?.name ?? null);
}

/**
 * Apply one finding's safe fix: the single action path for `f` and `drift --fix`. Runs in one
 * IMMEDIATE transaction with an audit record (old value, new value, evidence); a row changed since
 * detection, or a precondition that no longer holds, is refused and audited, never overwritten.
 */
export function applyFix(registry: FixRegistry, finding: Finding, options: FixOptions = {}): FixOutcome | undefined {
	const fix = finding.fix;
	if (!fix) return undefined;
	const now = options.now ?? Date.now;
	try {
		return registry.transaction(() => (fix.type === 'adopt-pane' ? adoptPane(registry, finding, fix, now) : applySessionFix(registry, finding, fix)));
	} catch (error) {
		const refused = error instanceof Refusal || error instanceof ConflictError;
		const message = messageOf(error);
		const session = refused ? auditSession(registry, fix) : null;
		registry.audit({
			session,
			action: 'drift-fix',
			step: fix.type,
			outcome: refused ? 'refused' : 'failed',
			detail: {kind: finding.kind, reason: message, fix, evidence: finding.evidence},
		});
		return {finding, fix, status: refused ? 'refused' : 'failed', ...(session ? {sessionName: session} : {}), message};
	}
}

/** Apply every finding's safe fix, in order; findings without one are skipped. */
export function applyFixes(registry: FixRegistry, findings: readonly Finding[], options: FixOptions = {}): FixOutcome[] {
	return findings.flatMap(finding => {
		const outcome = applyFix(registry, finding, options);
		return outcome ? [outcome] : [];
	});
}

/** How many detect → fix rounds `drift --fix` runs: one fix can reveal the next (pane gone → live elsewhere). */
const MAX_ROUNDS = 5;

export interface FixRun {
	readonly outcomes: readonly FixOutcome[];
	/** The findings left after the last round. */
	readonly findings: readonly Finding[];
	readonly input: DriftInput;
}

/**
 * `drift --fix`: detect, apply the safe fixes, and look again until nothing fixable is left (or a
 * round changes nothing). The mux is only listed; nothing is stopped, closed or typed into.
 */
export async function fixDrift(
	registry: FixRegistry,
	/** One look at the world (src/sync/pipeline.ts `collectDriftInput`: the dashboard's refresh, once). */
	collect: () => Promise<DriftInput>,
	options: FixOptions & {readonly agents?: AgentKnowledge} = {},
): Promise<FixRun> {
	const outcomes: FixOutcome[] = [];
	let input = await collect();
	let findings = detectDrift(input, options.agents);
	for (let round = 0; round < MAX_ROUNDS; round++) {
		const fixable = findings.filter(f => f.fix);
		if (fixable.length === 0) break;
		const applied = applyFixes(registry, fixable, options);
		outcomes.push(...applied);
		input = await collect();
		findings = detectDrift(input, options.agents);
		if (!applied.some(o => o.status === 'applied')) break;
	}
	return {outcomes, findings, input};
}
