import {describeFix} from '../domain/fixText.js';
import type {Conversation, Finding, Pane} from '../domain/types.js';
import type {AppState} from '../store/state.js';
import {attentionOf, toStatusPane, toStatusSession} from '../sync/statusJson.js';
import type {HostView} from './protocol.js';

/** Parts of the state the view is built from: an unchanged set of these is an unchanged view. */
export type ViewInputs = Pick<AppState, 'sessions' | 'live' | 'panes' | 'findings' | 'conversations' | 'mux'>;

export function sameInputs(a: ViewInputs | undefined, b: ViewInputs): boolean {
	return (
		a !== undefined &&
		a.sessions === b.sessions &&
		a.live === b.live &&
		a.panes === b.panes &&
		a.findings === b.findings &&
		a.conversations === b.conversations &&
		a.mux === b.mux
	);
}

/** A finding has no id of its own: its kind, row, pane and message name it (`drift.fix` looks it up by this). */
export function findingKey(f: Finding): string {
	return JSON.stringify([f.kind, f.sessionName ?? '', f.paneId ?? '', f.message]);
}

function findingJson(f: Finding): Record<string, unknown> {
	return {
		key: findingKey(f),
		kind: f.kind,
		session: f.sessionName ?? null,
		paneId: f.paneId ?? null,
		message: f.message,
		evidence: f.evidence,
		...(f.level ? {level: f.level} : {}),
		...(f.offer ? {offer: f.offer} : {}),
		...(f.candidates ? {candidates: f.candidates} : {}),
		fixable: f.fix !== undefined,
		...(f.fix ? {fix: describeFix(f.fix)} : {}),
	};
}

function conversationJson(c: Conversation): Record<string, unknown> {
	return {
		agent: c.agent,
		id: c.id,
		cwd: c.cwd,
		createdAt: new Date(c.createdAt).toISOString(),
		updatedAt: new Date(c.updatedAt).toISOString(),
		...(c.title !== undefined ? {title: c.title} : {}),
		...(c.parentId !== undefined ? {parentId: c.parentId} : {}),
		childCount: c.childCount,
	};
}

/** Panes running a known agent that no active row owns. */
function untrackedPanes(state: ViewInputs): Pane[] {
	const owned = new Set(Object.values(state.live).flatMap(l => (l.pane ? [l.pane.id] : [])));
	return state.panes.filter(p => !p.isSelf && p.agent !== undefined && !owned.has(p.id));
}

/** This machine as the wire carries it: the shapes of `status --json`, plus findings and conversations. */
export function hostView(state: ViewInputs, registry: string): HostView {
	const owner = new Map<string, string>();
	for (const s of state.sessions) {
		const pane = state.live[s.name]?.pane;
		if (pane && s.status !== 'purged') owner.set(pane.id, s.name);
	}
	const json = <T>(value: T) => value as unknown as Record<string, unknown>;
	return {
		registry,
		sessions: state.sessions.map(s => json(toStatusSession(s, state.live[s.name]))),
		panes: state.panes.map(p => json(toStatusPane(p, owner.get(p.id)))),
		// Only this machine's: a serve shows no other machine's findings as its own.
		findings: state.findings.filter(f => f.host === undefined).map(findingJson),
		conversations: state.conversations.map(conversationJson),
		attention: attentionOf(state.sessions, {live: state.live, untracked: untrackedPanes(state)}).map(json),
		mux: state.mux ? {kind: state.mux.kind, ok: state.mux.ok, message: state.mux.message} : {kind: null, ok: false, message: 'not listed yet'},
	};
}
