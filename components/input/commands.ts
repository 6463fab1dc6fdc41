import {assertNever} from '../../src/domain/result.js';
import type {UiActions} from '../../src/store/uiActions.js';
import type {Action} from '../../src/store/reducer.js';
import {selectedConversation, selectedSession, visibleSessions} from '../../src/store/selectors.js';
import type {AppState} from '../../src/store/state.js';
import type {Store} from '../../src/store/store.js';
import {maxDetailScroll} from '../screens/sessionsLayout.js';
import type {Command, Keymap} from './keymap.js';

export type AppStore = Store<AppState, Action>;

/** What a key handler may use: the store (read at call time), the actions, the keys, the screen size. */
export interface KeyContext {
	readonly store: AppStore;
	readonly actions: UiActions;
	readonly keymap: Keymap;
	/** The sessions pane's size and the home shown as `~`, for the detail panel's last page. */
	readonly viewport: () => {readonly width: number; readonly height: number; readonly home: string};
}

/** J/K move the detail panel by this many lines. */
const DETAIL_STEP = 5;

/** Marked rows when there are any (bulk), else the selected one. */
function targets(state: AppState): string[] {
	if (state.ui.marked.size > 0) {
		const visible = new Set(visibleSessions(state).map(s => s.name));
		return [...state.ui.marked].filter(name => visible.has(name));
	}
	const selected = selectedSession(state);
	return selected ? [selected.name] : [];
}

export function notice(store: AppStore, text: string): void {
	store.dispatch({type: 'notice/set', notice: {level: 'info', text, at: Date.now()}});
}

type SessionCommand = Extract<Command, 'session.focus' | 'session.resume' | 'session.stop' | 'session.park' | 'session.purge' | 'session.new' | 'row.mark'>;

function sessionCommand(command: SessionCommand, {store, actions}: KeyContext): void {
	const state = store.getState();
	const selected = selectedSession(state);
	switch (command) {
		case 'session.focus':
		case 'session.resume':
			// A parked session has no pane to focus: enter and r both wake it where it was.
			if (selected?.status === 'parked') actions.wake(selected.name);
			else if (selected) (command === 'session.focus' ? actions.focus : actions.resume)(selected.name);
			return;
		case 'session.park': {
			// Only asks: each park checks everything again right before it acts.
			const names = targets(state).filter(name => state.sessions.find(s => s.name === name)?.status === 'running');
			if (names.length > 0) store.dispatch({type: 'park/open', dialog: {names}});
			else notice(store, 'nothing to park: only running sessions can be parked');
			return;
		}
		case 'session.stop': {
			// Only asks: the stop runs when the confirmation is answered.
			const names = targets(state);
			if (names.length > 0) actions.openStop(names);
			return;
		}
		case 'session.purge': {
			const names = targets(state);
			if (names.length > 0) actions.openPurge(names);
			return;
		}
		case 'row.mark':
			if (selected) store.dispatch({type: 'mark/toggle', name: selected.name});
			return;
		case 'session.new':
			store.dispatch({type: 'new/open', cwd: selected?.cwd ?? ''});
			return;
	}
}

function conversationCommand(command: Extract<Command, `conversation.${string}`>, {store, actions}: KeyContext): void {
	const conversation = selectedConversation(store.getState());
	if (!conversation) return notice(store, 'no conversation selected');
	const ref = {agent: conversation.agent, id: conversation.id};
	if (command === 'conversation.adopt') actions.adopt(ref);
	else if (command === 'conversation.resume') actions.resumeConversation(ref);
	else if (command === 'conversation.purge') actions.openPurgeConversation(ref);
}

/** What `E` asks to be typed before a purge is deleted for good (as `mam-tui trash empty` does). */
export const TRASH_EMPTY_CONFIRMATION = 'empty 1';

function trashCommand(command: 'trash.restore' | 'trash.empty', {store, actions}: KeyContext): void {
	const state = store.getState();
	const entry = state.trash?.[state.ui.trashCursor];
	if (!entry) return notice(store, 'the trash is empty');
	if (command === 'trash.restore') actions.restoreTrash(entry.purgeId);
	else store.dispatch({type: 'trashEmpty/open', purgeId: entry.purgeId, expected: TRASH_EMPTY_CONFIRMATION});
}

function scrollDetail(delta: number, ctx: KeyContext): void {
	const state = ctx.store.getState();
	const {width, height, home} = ctx.viewport();
	const max = maxDetailScroll(state, width, height, home);
	const next = Math.max(0, Math.min(max, state.ui.detailScroll + delta));
	if (next !== state.ui.detailScroll) ctx.store.dispatch({type: 'detail/scroll', delta: next - state.ui.detailScroll});
}

/** Carry out a command. Reads the store at call time, never a value captured at render (STYLE 4.4). */
export function runCommand(command: Command, ctx: KeyContext): void {
	const {store, actions} = ctx;
	const {mode} = store.getState().ui;
	switch (command) {
		case 'cursor.down':
			return store.dispatch({type: 'cursor/move', delta: 1});
		case 'cursor.up':
			return store.dispatch({type: 'cursor/move', delta: -1});
		case 'cursor.top':
			return store.dispatch({type: 'cursor/top'});
		case 'cursor.bottom':
			return store.dispatch({type: 'cursor/bottom'});
		case 'detail.scrollDown':
			return scrollDetail(DETAIL_STEP, ctx);
		case 'detail.scrollUp':
			return scrollDetail(-DETAIL_STEP, ctx);
		case 'filter.start':
			return store.dispatch({type: 'mode/set', mode: 'filter'});
		case 'view.toggleFindings':
			return store.dispatch({type: 'mode/set', mode: mode === 'findings' ? 'sessions' : 'findings'});
		case 'view.conversations':
			return store.dispatch({type: 'mode/set', mode: mode === 'conversations' ? 'sessions' : 'conversations'});
		case 'conversations.scope':
			store.dispatch({type: 'conversations/scope'});
			if (store.getState().ui.conversationScope === 'all') actions.loadAllConversations();
			return;
		case 'conversations.all':
			return store.dispatch({type: 'conversations/toggleAll'});
		case 'help.toggle':
			return store.dispatch(mode === 'help' ? {type: 'mode/back'} : {type: 'mode/set', mode: 'help'});
		case 'notice.dismiss':
			return store.dispatch({type: 'notice/dismiss'});
		case 'app.back':
			return store.dispatch(mode === 'help' ? {type: 'mode/back'} : {type: 'mode/set', mode: 'sessions'});
		case 'app.refresh':
			return actions.refresh();
		case 'app.quit':
			return actions.quit();
		case 'purge.undo':
			return actions.undoPurge();
		case 'view.trash':
			if (mode === 'trash') return store.dispatch({type: 'mode/set', mode: 'sessions'});
			store.dispatch({type: 'mode/set', mode: 'trash'});
			return actions.loadTrash();
		case 'trash.restore':
		case 'trash.empty':
			return trashCommand(command, ctx);
		case 'finding.fix':
			return actions.applyFix(store.getState().ui.findingsCursor);
		case 'conversation.adopt':
		case 'conversation.resume':
		case 'conversation.purge':
			return conversationCommand(command, ctx);
		case 'session.focus':
		case 'session.resume':
		case 'session.stop':
		case 'session.park':
		case 'session.purge':
		case 'session.new':
		case 'row.mark':
			return sessionCommand(command, ctx);
		default:
			// A command bound in the keymap but handled nowhere does not compile.
			return assertNever(command);
	}
}
