import type {AgentStatus} from '../../domain/types.js';
import {messageOf} from '../../domain/result.js';
import type {Logger} from '../../system/logger.js';
import type {MuxEvent} from '../types.js';
import type {HerdrClient} from './client.js';
import {isBenign, StreamLoop} from './streamLoop.js';
import {agentStatusOf, isObject, type WireEvent, type WirePane, type WireSnapshot} from './wire.js';

/**
 * The lifecycle events we follow. Not `pane.updated` or `layout.updated`: they fire on every
 * title change and would fill the replay a protocol-20 herdr sends every new subscriber.
 */
const LIFECYCLE: readonly string[] = ['pane.created', 'pane.closed', 'pane.exited', 'pane.moved', 'pane.agent_detected', 'tab.closed', 'workspace.closed'];

/**
 * How long a change of the pane set waits before the status stream is re-opened: panes opened
 * together (or a protocol-20 replay of panes opened and closed long ago) cost one re-open, not one
 * each. Nothing is lost meanwhile: the re-opened stream takes a snapshot after subscribing.
 */
const RESTART_DELAY_MS = 250;

/**
 * A pane a snapshot no longer shows waits this long for the lifecycle event that says how it left
 * (closed or exited), which can be queued behind others at one event per 100 ms; without one it
 * is reported closed.
 */
const LEAVE_GRACE_MS = 1000;

export interface HerdrEventsOptions {
	readonly client: HerdrClient;
	readonly backoff: {readonly initialMs: number; readonly maxMs: number};
	/** How long after an event that can drop panes silently to re-read the pane set (ms). */
	readonly resyncMs: number;
	/** A fresh `session.snapshot` (protocol checked first). */
	readonly snapshot: () => Promise<WireSnapshot>;
	readonly emit: (event: MuxEvent) => void;
	/** A stream's state: undefined = streaming; a message = down, with when the next attempt comes. */
	readonly onState: (which: 'lifecycle' | 'status', error: string | undefined) => void;
	readonly logger?: Logger;
}

/** What the streams last said about one pane, and when (`at`: the value of `seq` when it was last set). */
interface PaneView {
	agent: string | undefined;
	status: AgentStatus;
	at: number;
}

/**
 * herdr's event streams, turned into MuxEvents that report each change once.
 *
 * Every stream subscribes first and takes a snapshot once herdr said `subscription_started`
 * (PROTOCOL 14: herdr 0.9 no longer replays past events, so a change between a snapshot and a
 * later subscription would be lost). A change in between then arrives both as an event and in
 * the snapshot, and a protocol-20 herdr replays older events on top, so both are applied to one
 * view of the panes and only what changes that view is emitted. Ids are never reused (PROTOCOL 2),
 * so a pane seen leaving is never brought back by an older snapshot, and a snapshot removes or
 * changes only what no event touched after it was asked for.
 *
 * The first snapshot is the baseline: it emits one `changed` (listeners look once, after the
 * streams are live) instead of an event per pane, and events that arrive before it only update
 * the view. Later snapshots (a reconnect, a re-opened status
 * stream, a resync after a workspace closed) emit what they find changed; a pane one finds gone
 * first waits briefly for the lifecycle event that says whether it was closed or exited. Pane listings the
 * backend makes for its callers do not touch this view or the streams.
 *
 * Two streams, because a protocol-20 herdr replays its ring of recent lifecycle events to every
 * new subscriber at one event per 100 ms (PROTOCOL 5.4): the lifecycle stream is opened once and
 * kept; the per-pane status stream is the one re-opened when the pane set changes, since a
 * subscription list is fixed for the life of its connection.
 */
export class HerdrEvents {
	private readonly options: HerdrEventsOptions;
	private readonly panes = new Map<string, PaneView>();
	private readonly gone = new Set<string>();
	/** Bumped by every event that changed the view and by every snapshot applied to it. */
	private seq = 0;
	private baselined = false;
	/** The sorted pane ids the open status stream watches. */
	private watching = '';
	private readonly lifecycle: StreamLoop;
	private readonly status: StreamLoop;
	private resyncTimer: NodeJS.Timeout | undefined;
	private restartTimer: NodeJS.Timeout | undefined;
	/** Panes a snapshot found gone, waiting for the event that says how (see LEAVE_GRACE_MS). */
	private readonly leaving = new Map<string, NodeJS.Timeout>();
	private stopped = false;

	constructor(options: HerdrEventsOptions) {
		this.options = options;
		const common = {client: options.client, backoff: options.backoff, onEvent: (event: WireEvent) => this.onWireEvent(event), benign: isBenign};
		this.lifecycle = new StreamLoop({
			...common,
			subscriptions: async () => LIFECYCLE.map(type => ({type})),
			synced: () => this.sync(),
			onState: error => options.onState('lifecycle', error),
			// Whatever happened while the stream was down is in the snapshot just taken.
			onReconnected: () => options.emit({type: 'changed'}),
		});
		this.status = new StreamLoop({
			...common,
			subscriptions: async retry => {
				// A pane that vanished fails the whole subscription: re-read the set before retrying.
				if (retry) await this.sync();
				// The view is empty until the lifecycle stream's first snapshot: nothing to watch yet.
				if (!this.baselined) return undefined;
				const ids = [...this.panes.keys()].sort();
				this.watching = ids.join('\n');
				return ids.length === 0 ? undefined : ids.map(id => ({type: 'pane.agent_status_changed', pane_id: id}));
			},
			// Status changes between the last snapshot and this subscription (new panes, or all of
			// them while the stream was re-opened) are only in a new snapshot.
			synced: () => this.sync(),
			onState: error => options.onState('status', error),
			onReconnected: () => options.emit({type: 'changed'}),
		});
	}

	start(): void {
		this.lifecycle.start();
		this.status.start();
	}

	async stop(): Promise<void> {
		this.stopped = true;
		clearTimeout(this.resyncTimer);
		clearTimeout(this.restartTimer);
		for (const timer of this.leaving.values()) clearTimeout(timer);
		this.leaving.clear();
		await Promise.all([this.lifecycle.stop(), this.status.stop()]);
	}

	/** True while the streams are open and synced (changes from now on arrive as events). */
	live(): boolean {
		return this.lifecycle.live && (this.panes.size === 0 || this.status.live);
	}

	/** A snapshot applied to the view; `asked` tells which events it may already contain. */
	private async sync(): Promise<void> {
		const asked = this.seq;
		const snapshot = await this.options.snapshot();
		if (!this.stopped) this.apply(snapshot.panes, asked);
	}

	/**
	 * A view entry set after this snapshot was asked for (by an event, or by a snapshot answered
	 * meanwhile) may be newer than what it shows, so it is left alone.
	 */
	private apply(panes: readonly WirePane[], asked: number): void {
		const baseline = !this.baselined;
		this.baselined = true;
		this.seq += 1;
		const now = this.seq;
		const listed = new Set<string>();
		for (const pane of panes) {
			listed.add(pane.paneId);
			if (this.gone.has(pane.paneId)) continue;
			const view = this.panes.get(pane.paneId);
			if (!view) {
				this.panes.set(pane.paneId, {agent: pane.agent, status: pane.agentStatus, at: now});
				if (!baseline) this.options.emit({type: 'pane-created', paneId: pane.paneId});
				continue;
			}
			if (view.at > asked) continue;
			if (view.agent !== pane.agent || view.status !== pane.agentStatus) view.at = now;
			if (view.agent !== pane.agent) {
				view.agent = pane.agent;
				this.options.emit({type: 'agent-detected', paneId: pane.paneId, ...(pane.agent ? {agent: pane.agent} : {})});
			}
			if (view.status !== pane.agentStatus) {
				view.status = pane.agentStatus;
				this.options.emit({type: 'agent-status', paneId: pane.paneId, status: pane.agentStatus, ...(pane.agent ? {agent: pane.agent} : {})});
			}
		}
		for (const [id, view] of this.panes) {
			if (listed.has(id) || view.at > asked) continue;
			this.forget(id);
			if (!baseline) this.announceLeaving(id);
		}
		if (baseline) this.options.emit({type: 'changed'});
		this.paneSetChanged();
	}

	/** Report a pane a snapshot found gone: as the lifecycle event says, if one comes soon, else as closed. */
	private announceLeaving(id: string): void {
		const timer = setTimeout(() => {
			this.leaving.delete(id);
			if (!this.stopped) this.options.emit({type: 'pane-closed', paneId: id});
		}, LEAVE_GRACE_MS);
		timer.unref();
		this.leaving.set(id, timer);
	}

	private forget(id: string): void {
		this.panes.delete(id);
		this.gone.add(id);
	}

	/** The status stream watches a fixed list of panes: re-open it (soon) when the set moved. */
	private paneSetChanged(): void {
		if (this.stopped || this.restartTimer) return;
		this.restartTimer = setTimeout(() => {
			this.restartTimer = undefined;
			if (this.stopped || [...this.panes.keys()].sort().join('\n') === this.watching) return;
			this.status.restart();
		}, RESTART_DELAY_MS);
		this.restartTimer.unref();
	}

	/** After events that can drop panes silently (moves, tab/workspace closes), re-read the set. */
	private scheduleResync(): void {
		clearTimeout(this.resyncTimer);
		this.resyncTimer = setTimeout(() => {
			if (this.stopped) return;
			this.sync().catch(error => this.options.logger?.debug('herdr resync failed', messageOf(error)));
		}, this.options.resyncMs);
		this.resyncTimer.unref();
	}

	private onWireEvent(event: WireEvent): void {
		// Before the first snapshot every pane looks new (and a protocol-20 replay is all old
		// news): events only update the view, and the baseline's `changed` covers them.
		const emit = (e: MuxEvent) => {
			if (this.baselined) this.options.emit(e);
		};
		const data = event.data;
		const paneId = typeof data['pane_id'] === 'string' ? data['pane_id'] : undefined;
		const agentOf = (obj: Readonly<Record<string, unknown>>) => (typeof obj['agent'] === 'string' ? obj['agent'] : undefined);
		switch (event.event) {
			case 'pane_created': {
				const pane = data['pane'];
				const id = isObject(pane) && typeof pane['pane_id'] === 'string' ? pane['pane_id'] : undefined;
				// Seen already: in a snapshot, or a replay / the overlap delivering it again.
				if (!id || !isObject(pane) || this.panes.has(id) || this.gone.has(id)) return;
				this.seq += 1;
				this.panes.set(id, {agent: agentOf(pane), status: agentStatusOf(pane['agent_status']), at: this.seq});
				emit({type: 'pane-created', paneId: id});
				this.paneSetChanged();
				return;
			}
			case 'pane_closed':
			case 'pane_exited': {
				if (!paneId) return;
				const type = event.event === 'pane_closed' ? 'pane-closed' : 'pane-exited';
				const leaving = this.leaving.get(paneId);
				if (leaving) {
					clearTimeout(leaving);
					this.leaving.delete(paneId);
					emit({type, paneId});
					return;
				}
				if (this.gone.has(paneId)) return;
				this.seq += 1;
				const known = this.panes.has(paneId);
				// Remembered even when unknown: an older snapshot still listing it must not bring it back.
				this.forget(paneId);
				if (!known) return;
				emit({type, paneId});
				this.paneSetChanged();
				return;
			}
			case 'pane_agent_detected': {
				const view = paneId ? this.panes.get(paneId) : undefined;
				const agent = agentOf(data);
				if (!paneId || !view || view.agent === agent) return;
				this.seq += 1;
				view.agent = agent;
				view.at = this.seq;
				emit({type: 'agent-detected', paneId, ...(agent ? {agent} : {})});
				return;
			}
			case 'pane.agent_status_changed': {
				const view = paneId ? this.panes.get(paneId) : undefined;
				const status = agentStatusOf(data['agent_status']);
				if (!paneId || !view || view.status === status) return;
				this.seq += 1;
				view.status = status;
				view.at = this.seq;
				const agent = agentOf(data);
				emit({type: 'agent-status', paneId, status, ...(agent ? {agent} : {})});
				return;
			}
			case 'pane_moved':
			case 'tab_closed':
			case 'workspace_closed':
				// Panes can leave without a pane_closed here (PROTOCOL 5.3): re-read the set.
				emit({type: 'changed'});
				this.scheduleResync();
				return;
			default:
				// Unknown and uninteresting events (layout_updated, new kinds) are ignored.
				return;
		}
	}
}
