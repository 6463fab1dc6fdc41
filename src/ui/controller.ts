import type {ActionResult} from '../actions/types.js';
import type {Actions, ParkResult, PurgePlanView, StopProgress, TrashListing, WakeResult} from '../actions/index.js';
import {formatBytes} from '../actions/format.js';
import type {AgentAdapter} from '../adapters/types.js';
import type {Config} from '../config/config.js';
import type {Conversation, FindingHost} from '../domain/types.js';
import {applyFix, type FixAnswer} from '../actions/driftFix.js';
import {messageOf} from '../domain/result.js';
import type {Multiplexer} from '../mux/types.js';
import type {Registry} from '../registry/registry.js';
import type {Action} from '../store/reducer.js';
import type {AppState, PlanView, StepView, StopTarget, TrashRow} from '../store/state.js';
import type {Store} from '../store/store.js';
import type {ConversationRef, UiActions} from '../store/uiActions.js';
import type {Logger} from '../system/logger.js';
import {planLinesOf} from './planLines.js';

export interface ControllerDeps {
	readonly store: Store<AppState, Action>;
	readonly actions: Actions;
	readonly registry: Registry;
	readonly mux: () => Promise<Multiplexer>;
	readonly logger: Logger;
	readonly now: () => number;
	/** Re-read the registry and live data (the supervisor's refresh). */
	readonly refresh: () => void;
	readonly quit: () => void;
	/** The stop's waits and the agents' exit texts, for the confirmation. */
	readonly config: Pick<Config, 'stop' | 'agents'>;
	readonly adapterFor: (agent: string) => AgentAdapter | undefined;
	/** Every folder's conversations (the conversations view's `A`). */
	readonly discoverAll: () => Promise<Conversation[]>;
	/** Ask a host (config.yaml hosts:) to fix the finding it knows by `key`; absent: no hosts. */
	readonly fixOnHost?: (host: string, key: string) => Promise<ActionResult<FixAnswer>>;
}

const STOP_LABELS: Record<StopProgress['step'], string> = {
	capture: 'capture',
	'exit-input': '1 exit input',
	'close-pane': '2 close pane',
	sigkill: '3 SIGKILL',
};

export function toPlanView(view: PurgePlanView): PlanView {
	return {
		target: view.label,
		agent: view.agent,
		id: view.id,
		descendants: view.plan.descendants,
		lines: planLinesOf(view.plan.items),
		totalBytes: view.plan.totalBytes,
	};
}

function toTrashRow(entry: TrashListing): TrashRow {
	const {purgeId, agent, conversation, label, state, ageMs, bytes, items} = entry;
	return {purgeId, agent, conversation, label, state, ageMs, bytes, items};
}

/** `parked api-fix: idle 52 min, freed 812 MB`, or which check refused it. */
export function parkLine(result: ParkResult): string {
	switch (result.outcome) {
		case 'parked':
			return `parked ${result.session}: idle ${Math.round(result.parked.idleSeconds / 60)} min, freed ${formatBytes(result.parked.freedBytes)}`;
		case 'would-park':
			return `${result.session} would be parked`;
		case 'refused':
			return `${result.session} not parked (${result.check}): ${result.why}`;
		case 'still-running':
			return `${result.session} not parked: ${result.why}`;
	}
}

function wakeLine(result: WakeResult): string {
	if (result.outcome === 'refused') return `wake ${result.session}: ${result.why}`;
	const ready = result.readyMs === null ? 'not ready yet' : `ready in ${(result.readyMs / 1000).toFixed(1)} s`;
	return `woke ${result.session} in pane ${result.paneId}, ${ready}`;
}

/**
 * The dashboard's side of the actions: turns key intents into action calls, and action progress
 * into store updates. Every method returns at once; the work runs in the background so the UI
 * stays responsive, and several stops may run side by side.
 */
export function createUiController(deps: ControllerDeps): UiActions {
	const {store, actions} = deps;
	/** The plans the open purge dialog shows; confirmation re-checks them in the action. */
	let pendingPlans: readonly PurgePlanView[] = [];
	/** The trash entries of this dashboard's last purge: what `u` restores. */
	let lastPurge: readonly string[] = [];

	const notice = (level: 'info' | 'ok' | 'error', text: string) => store.dispatch({type: 'notice/set', notice: {level, text, at: deps.now()}});

	/** Run `work` detached; a thrown error becomes a notice and a log line, never a crash. */
	const background = (what: string, work: () => Promise<void>) => {
		work().catch((error: unknown) => {
			deps.logger.error(`${what} failed`, error);
			notice('error', `${what} failed: ${messageOf(error)}`);
		});
	};

	/** The row as the dashboard lists it: a host's row is in no registry here. */
	const listedRow = (name: string) => store.getState().sessions.find(s => s.name === name);

	/** `f` on another machine's finding: that machine looks the finding up again and fixes it. */
	const fixOnHost = async (host: FindingHost) => {
		if (!host.fix) return notice('info', `no automatic fix on ${host.name}`);
		if (!deps.fixOnHost) return notice('error', `${host.name} is not a configured host here; nothing was sent`);
		notice('info', `${host.name}: ${host.fix}…`);
		const result = await deps.fixOnHost(host.name, host.key);
		// A refusal names the host already (it may come from this side: the host is down).
		if (!result.ok) return notice('error', result.error.message);
		notice(result.value.status === 'applied' ? 'ok' : 'error', `${host.name}: ${result.value.message}`);
	};

	const stopOne = async (name: string) => {
		const startedAt = deps.now();
		store.dispatch({type: 'operation/started', operation: {kind: 'stop', session: name, startedAt, steps: []}});
		const onProgress = (p: StopProgress) => {
			const at = deps.now();
			const step: StepView = {
				id: p.step,
				label: STOP_LABELS[p.step],
				state: p.state,
				startedAt: at - p.elapsedMs,
				...(p.state === 'running' ? {} : {endedAt: at}),
				detail: p.message,
			};
			store.dispatch({type: 'operation/step', session: name, step});
		};
		const result = await actions.stop({name}, {onProgress});
		const text = result.ok
			? result.value.ok
				? `ended by ${result.value.endedBy}`
				: `survivors: ${result.value.survivors.map(s => s.pid).join(', ')}`
			: result.error.message;
		// The operation's own line becomes the one-line outcome; no second notice repeats it.
		store.dispatch({type: 'operation/ended', session: name, at: deps.now(), ok: result.ok && result.value.ok, text});
		deps.refresh();
	};

	const openPurgeFor = async (refs: readonly ({name: string} | ConversationRef)[], targets: readonly string[]) => {
		pendingPlans = [];
		store.dispatch({type: 'purge/open', targets, expected: targets.length === 1 ? (targets[0] ?? '') : `purge ${targets.length}`});
		const views: PurgePlanView[] = [];
		for (const ref of refs) {
			const result = await actions.purgePlan(ref);
			if (!result.ok) {
				store.dispatch({type: 'purge/plans', plans: [], refusal: result.error.message});
				return;
			}
			views.push(result.value);
		}
		pendingPlans = views;
		// The label the action expects wins over our guess (a conversation purge types its id).
		store.dispatch({type: 'purge/open', targets: views.map(v => v.label), expected: actions.expectedConfirmation(views)});
		store.dispatch({type: 'purge/plans', plans: views.map(toPlanView)});
	};

	/**
	 * What step 1 of a stop will type: the config's override, else the adapter's. The row as the
	 * dashboard lists it: a host's row is in no registry here (and its host's config decides there).
	 */
	const stopTarget = (name: string): StopTarget => {
		const session = listedRow(name) ?? deps.registry.get(name);
		const agent = session?.agent ?? '?';
		const adapter = deps.adapterFor(agent);
		const override = adapter && session?.host === undefined ? deps.config.agents[adapter.id]?.exitInput : undefined;
		return {name, agent, pane: session?.paneId ?? null, exitText: override ?? adapter?.exitInput.text ?? 'the exit command'};
	};

	const loadAll = () =>
		background('conversations in every folder', async () => {
			const conversations = await deps.discoverAll();
			store.dispatch({type: 'conversations/all', conversations});
		});

	const loadTrash = () =>
		background('trash', async () => {
			const result = await actions.trashList();
			if (!result.ok) return notice('error', `trash: ${result.error.message}`);
			store.dispatch({type: 'trash/loaded', entries: result.value.map(toTrashRow)});
		});

	return {
		quit: () => deps.quit(),
		refresh: () => {
			deps.refresh();
			if (store.getState().ui.conversationScope === 'all') loadAll();
			if (store.getState().trash !== null) loadTrash();
		},
		loadTrash,
		restoreTrash: purgeId =>
			background('restore', async () => {
				const result = await actions.restore(purgeId);
				if (!result.ok) notice('error', `restore ${purgeId}: ${result.error.message}`);
				else notice('ok', `restored ${result.value.agent}:${result.value.conversation} from ${purgeId}`);
				loadTrash();
				deps.refresh();
			}),
		emptyTrash: purgeId =>
			background('empty trash', async () => {
				const result = await actions.trashEmptyOne(purgeId);
				notice(result.ok ? 'ok' : 'error', result.ok ? `emptied ${purgeId} from the trash (deleted for good)` : `empty ${purgeId}: ${result.error.message}`);
				loadTrash();
			}),
		openStop: names =>
			store.dispatch({
				type: 'stop/open',
				dialog: {targets: names.map(stopTarget), graceSeconds: deps.config.stop.graceSeconds, killWaitSeconds: deps.config.stop.killWaitSeconds},
			}),
		loadAllConversations: loadAll,
		focus: name =>
			background('focus', async () => {
				const listed = listedRow(name);
				if (listed?.host !== undefined)
					return notice('info', `${name} runs on ${listed.host}${listed.paneId ? `, in its pane ${listed.paneId}` : ''}: focus it there`);
				const session = deps.registry.get(name);
				if (!session?.paneId) return notice('info', `${name} has no pane to focus`);
				const mux = await deps.mux();
				if (!mux.can.focuses) return notice('info', `${mux.kind} cannot bring a pane to the front; ${name} is in pane ${session.paneId}`);
				await mux.focusPane(session.paneId);
				notice('ok', `focused ${session.paneId}`);
			}),
		resume: name =>
			background('resume', async () => {
				const result = await actions.resume({name});
				notice(result.ok ? 'ok' : 'error', result.ok ? `resumed ${name} in pane ${result.value.paneId}` : `resume ${name}: ${result.error.message}`);
				deps.refresh();
			}),
		stop: names => {
			for (const name of names) background(`stop ${name}`, () => stopOne(name));
		},
		park: names =>
			background('park', async () => {
				notice('info', `parking ${names.join(', ')}…`);
				const results = await actions.park({names});
				const lines = results.map(parkLine);
				const failed = results.some(r => r.outcome !== 'parked');
				notice(failed ? 'error' : 'ok', lines.join('; '));
				deps.refresh();
			}),
		wake: name =>
			background('wake', async () => {
				notice('info', `waking ${name}…`);
				const [result] = await actions.wake({names: [name]});
				if (!result) return;
				notice(result.outcome === 'woken' ? 'ok' : 'error', wakeLine(result));
				deps.refresh();
			}),
		openPurge: names =>
			background('purge plan', () =>
				openPurgeFor(
					names.map(name => ({name})),
					names,
				),
			),
		openPurgeConversation: ref => background('purge plan', () => openPurgeFor([ref], [ref.id])),
		confirmPurge: typed =>
			background('purge', async () => {
				const plans = pendingPlans;
				pendingPlans = [];
				if (!actions.confirmPurge(plans, typed)) return notice('info', 'purge cancelled: the typed text did not match');
				const label = plans.map(p => p.label).join(', ');
				notice('info', `purging ${label}…`);
				const result = await actions.purge(plans, typed);
				if (!result.ok) return notice('error', `purge ${label}: ${result.error.message}`);
				const residual = result.value.flatMap(r => r.residual);
				lastPurge = result.value.flatMap(r => (r.trashId ? [r.trashId] : []));
				const undo = lastPurge.length > 0 ? ' — u to undo' : '';
				notice(
					residual.length ? 'error' : 'ok',
					residual.length ? `purge left ${residual.length} artifact(s): ${residual.slice(0, 2).join('; ')}${undo}` : `purged ${label}${undo}`,
				);
				deps.refresh();
			}),
		applyFix: index =>
			background('fix', async () => {
				const finding = store.getState().findings[index];
				if (!finding) return;
				if (finding.host) return fixOnHost(finding.host);
				if (!finding.fix) return notice('info', `${finding.kind}: no automatic fix${finding.offer ? ` — ${finding.offer}` : ''}`);
				const outcome = applyFix(deps.registry, finding, {now: deps.now});
				if (outcome) notice(outcome.status === 'applied' ? 'ok' : 'error', outcome.message);
				deps.refresh();
			}),
		newSession: (agent, cwd) =>
			background('new session', async () => {
				const result = await actions.newSession({agent, cwd});
				notice(
					result.ok ? 'ok' : 'error',
					result.ok ? `started ${result.value.name} in ${result.value.paneId ?? 'a new pane'}` : `new session: ${result.error.message}`,
				);
				deps.refresh();
			}),
		adopt: ref =>
			background('adopt', async () => {
				const result = await actions.adopt({agent: ref.agent, id: ref.id});
				notice(result.ok ? 'ok' : 'error', result.ok ? `adopted ${ref.id} as ${result.value.session.name}` : `adopt: ${result.error.message}`);
				deps.refresh();
			}),
		undoPurge: () =>
			background('undo purge', async () => {
				const ids = lastPurge;
				lastPurge = [];
				if (ids.length === 0) return notice('info', 'no purge to undo (mam-tui trash lists older ones; mam-tui restore PURGE_ID)');
				for (const id of ids) {
					const result = await actions.restore(id);
					if (!result.ok) return notice('error', `undo: ${result.error.message}`);
				}
				notice('ok', `restored ${ids.length} purge(s) from the trash`);
				deps.refresh();
			}),
		resumeConversation: ref =>
			background('resume', async () => {
				const result = await actions.resume({agent: ref.agent, id: ref.id});
				notice(result.ok ? 'ok' : 'error', result.ok ? `resumed ${ref.id} in pane ${result.value.paneId}` : `resume: ${result.error.message}`);
				deps.refresh();
			}),
	};
}
