import type {AgentAdapter, InUseHolder} from '../adapters/types.js';
import {resumability, type ResumeBlock, type ResumeFacts} from '../domain/resumability.js';
import {assertNever, messageOf} from '../domain/result.js';
import type {Pane, PanePlacement, ResumeState, SessionRecord} from '../domain/types.js';
import {folderExists} from '../system/folder.js';
import type {Multiplexer} from '../mux/types.js';
import {ConflictError} from '../registry/registry.js';
import {adapterOf, audit, validId, withExtraArgs} from './session.js';
import {describeHolders, refusal, type ActionDeps, type ActionResult, type Refusal} from './types.js';
import {isRecordedPane} from '../drift/paneJoin.js';
import {resumeExtra, withPaneServer} from '../registry/extra.js';
import {serverOfPane} from './paneServer.js';

export interface ResumeOutcome {
	readonly session: SessionRecord;
	readonly paneId: string;
	readonly argv: readonly string[];
	readonly cwd: string;
}

/** The pane the row points at (same id and server), when it still runs this agent: the session is live. */
function liveAgentPane(panes: readonly Pane[], adapter: AgentAdapter, row: SessionRecord, muxKind: Multiplexer['kind']): Pane | undefined {
	if (!row.paneId) return undefined;
	const pane = panes.find(p => isRecordedPane(row, p, muxKind));
	return pane && pane.processes.some(p => adapter.matchesProcess(p)) ? pane : undefined;
}

/** The facts of SPEC 6.1 for this session, judged by the one rule (domain/resumability.ts); each refusal worded for the CLI. */
async function checkResumable(deps: ActionDeps, adapter: AgentAdapter, mux: Multiplexer, session: SessionRecord): Promise<ActionResult<string>> {
	const pin = session.agentSessionId;
	if (session.status !== 'purged' && pin !== null) {
		const id = validId(adapter, pin);
		if (!id.ok) return id;
	}
	const panes = pin === null || session.status === 'purged' ? [] : await mux.listPanes();
	const live = liveAgentPane(panes, adapter, session, mux.kind);
	const elsewhere = pin === null ? undefined : livePinElsewhere(deps, panes, adapter, session, mux.kind, pin);
	let facts: ResumeFacts = {
		purged: session.status === 'purged',
		pin,
		...(live && (session.mux === null || session.mux === mux.kind) ? {livePane: live.id} : {}),
		...(elsewhere ? {liveElsewhere: elsewhere} : {}),
		cwd: session.cwd,
		cwdPresent: undefined,
		onDisk: undefined,
		use: undefined,
	};
	let holders: readonly InUseHolder[] = [];
	// Each fact is found out only when the rule gets to it (verify and inUse read the agent's store).
	for (;;) {
		const verdict = resumability(facts);
		if (!('missing' in verdict))
			return 'block' in verdict ? refusalFor(verdict.block, verdict.state, session, facts, holders) : {ok: true, value: pin as string};
		const id = pin as string;
		if (verdict.missing === 'cwdPresent') facts = {...facts, cwdPresent: folderExists(session.cwd)};
		else if (verdict.missing === 'onDisk') facts = {...facts, onDisk: await adapter.verify(deps.context, id, session.cwd)};
		else {
			holders = await adapter.inUse(deps.context, id);
			facts = {...facts, use: {ok: true, holders}};
		}
	}
}

/** Another row pinned to the same conversation whose agent runs now. */
function livePinElsewhere(
	deps: ActionDeps,
	panes: readonly Pane[],
	adapter: AgentAdapter,
	session: SessionRecord,
	muxKind: Multiplexer['kind'],
	pin: string,
): {session: string; pane: string} | undefined {
	for (const other of deps.registry.findByPin(adapter.id, pin)) {
		if (other.id === session.id) continue;
		const pane = liveAgentPane(panes, adapter, other, muxKind);
		if (pane) return {session: other.name, pane: pane.id};
	}
	return undefined;
}

/** The CLI's words for a verdict the rule blocked. */
function refusalFor(
	block: ResumeBlock,
	state: ResumeState,
	session: SessionRecord,
	facts: ResumeFacts,
	holders: readonly InUseHolder[],
): {readonly ok: false; readonly error: Refusal} {
	const id = facts.pin ?? '';
	const reason = state.kind === 'yes' ? '' : state.reason;
	switch (block) {
		case 'purged':
			return refusal('purged', `session ${session.name} was purged; its conversation is gone`);
		case 'unpinned':
			return refusal(
				'unpinned',
				`session ${session.name} has no conversation id pinned yet (run \`mam-tui drift --fix\` once the agent wrote one); nothing to resume`,
			);
		case 'live':
			return refusal('live', `session ${session.name} is live in pane ${facts.livePane ?? '?'}; focus it instead of resuming`);
		case 'live-elsewhere':
			return refusal('in-use', `conversation ${id} is live in session ${facts.liveElsewhere?.session ?? '?'} (pane ${facts.liveElsewhere?.pane ?? '?'})`);
		case 'cwd-missing':
			return refusal('cwd-missing', `the session's folder ${session.cwd} does not exist any more; resume runs only there`);
		case 'not-on-disk':
			return refusal('not-resumable', `conversation ${id} cannot be resumed: ${reason}`);
		case 'in-use':
			return refusal('in-use', `conversation ${id} is in use: ${describeHolders(holders)}`, holders);
		case 'use-unknown':
			return refusal('failed', `could not tell who uses conversation ${id}: ${reason}`);
		default:
			return assertNever(block);
	}
}

/** Audit a refusal and hand it back; the row stays as it was. */
function refused(
	deps: ActionDeps,
	session: SessionRecord,
	result: {readonly ok: false; readonly error: Refusal},
): {readonly ok: false; readonly error: Refusal} {
	audit(deps, {session: session.name, action: 'resume', outcome: 'refused', detail: {kind: result.error.kind, message: result.error.message}});
	return result;
}

/**
 * How long a resume's claim on a conversation turns a second resume away: the first one's agent
 * may not show in its pane yet, so the live and in-use checks cannot see it.
 */
const RESUME_CLAIM_MS = 15_000;

/**
 * Claim the conversation for this resume, atomically across mam-tui processes: refused while
 * another resume of it (this row or another pinned to the same id) is recent, or when the row
 * changed since it was read. Two resumes at once start exactly one agent.
 */
function claimResume(deps: ActionDeps, adapter: AgentAdapter, session: SessionRecord, id: string): ActionResult<SessionRecord> {
	try {
		return deps.registry.transaction(() => {
			for (const row of deps.registry.findByPin(adapter.id, id)) {
				const claim = resumeExtra.read(row.extra);
				const age = claim ? deps.now() - claim.at : Infinity;
				if (age >= 0 && age < RESUME_CLAIM_MS) {
					const where = claim?.paneId ? ` into pane ${claim.paneId}` : '';
					return refusal(
						'in-use',
						`conversation ${id} was resumed ${Math.round(age / 1000)} s ago by session ${row.name}${where} (pid ${claim?.pid ?? '?'}); its agent may still be starting`,
					);
				}
			}
			const claimed = deps.registry.update(session.id, {extra: resumeExtra.write(session.extra, {at: deps.now(), pid: process.pid})}, session.version);
			return {ok: true, value: claimed};
		});
	} catch (error) {
		if (error instanceof ConflictError) return refusal('changed', `${error.message}; nothing was started`);
		throw error;
	}
}

/**
 * Resume a stopped session (SPEC 6.1) in a new pane, in its recorded cwd, with the adapter's
 * resume argv. A refusal or a failed pane leaves the row exactly as it was: the pinned id is
 * never forgotten and never replaced by "the newest conversation".
 */
/**
 * The adapter's conversation guard (gemini's stub, issue 18 item 5), audited under `action`; its
 * failure never fails the action. Also run by stop, after the agent exited.
 */
export async function guardConversation(deps: ActionDeps, adapter: AgentAdapter, name: string, id: string, action: 'resume' | 'stop'): Promise<void> {
	if (!adapter.guardConversation) return;
	try {
		const removed = await adapter.guardConversation(deps.context, id);
		if (removed.length > 0) audit(deps, {session: name, action, step: 'remove-stub', outcome: 'ok', detail: {id, removed}});
	} catch (error) {
		audit(deps, {session: name, action, step: 'remove-stub', outcome: 'failed', detail: {id, message: messageOf(error)}});
	}
}

/** Where a resume opens its pane (a wake: where the parked agent was). */
export interface ResumeOptions {
	readonly placement?: PanePlacement;
}

export async function resumeSession(deps: ActionDeps, given: SessionRecord, options: ResumeOptions = {}): Promise<ActionResult<ResumeOutcome>> {
	const adapter = adapterOf(deps, given.agent);
	if (!adapter.ok) return adapter;
	// The row as it is now: its version is what the claim compares against.
	const session = deps.registry.getById(given.id) ?? given;
	const mux = await deps.mux();
	const checked = await checkResumable(deps, adapter.value, mux, session);
	if (!checked.ok) return refused(deps, session, checked);
	const claimed = claimResume(deps, adapter.value, session, checked.value);
	if (!claimed.ok) return refused(deps, session, claimed);
	// A stub an earlier run left would make this start delete the conversation (gemini).
	await guardConversation(deps, adapter.value, session.name, checked.value, 'resume');
	const launch = adapter.value.resume(deps.context, checked.value);
	const argv = withExtraArgs(deps, adapter.value, launch.argv);
	audit(deps, {session: session.name, action: 'resume', step: 'open-pane', outcome: 'started', detail: {argv, cwd: session.cwd, mux: mux.kind}});
	let paneId: string;
	try {
		paneId = await mux.openPane({
			argv,
			cwd: session.cwd,
			...(launch.env ? {env: launch.env} : {}),
			title: session.name,
			...(options.placement ? {placement: options.placement} : {}),
		});
	} catch (error) {
		// No agent started: the claim goes, so trying again right away is fine.
		deps.registry.updateExtra(session.id, extra => resumeExtra.remove(extra));
		audit(deps, {session: session.name, action: 'resume', step: 'open-pane', outcome: 'failed', detail: {message: messageOf(error)}});
		return refusal('failed', `could not open a ${mux.kind} pane for ${session.name}: ${messageOf(error)}`);
	}
	const server = await serverOfPane(mux, paneId);
	const updated = deps.registry.transaction(() => {
		const current = deps.registry.getById(session.id) ?? claimed.value;
		const claim = resumeExtra.read(current.extra);
		return deps.registry.update(session.id, {
			status: 'running',
			paneId,
			mux: mux.kind,
			extra: claim ? resumeExtra.write(withPaneServer(current.extra, server), {...claim, paneId}) : withPaneServer(current.extra, server),
		});
	});
	audit(deps, {session: session.name, action: 'resume', outcome: 'ok', detail: {paneId, argv, cwd: session.cwd}});
	return {ok: true, value: {session: updated, paneId, argv, cwd: session.cwd}};
}
