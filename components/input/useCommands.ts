import {useInput} from 'ink';
import {useApp, type UiActions} from '../StoreContext.js';
import {resolveCommand, type Command} from './keymap.js';
import {typedChunk} from './typedChunk.js';
import type {Action} from '../../src/store/reducer.js';
import {selectedConversation, selectedSession, visibleSessions} from '../../src/store/selectors.js';
import type {AppState} from '../../src/store/state.js';
import type {Store} from '../../src/store/store.js';

type AppStore = Store<AppState, Action>;

/** Marked rows when there are any (bulk), else the selected one. */
function targets(state: AppState): string[] {
	if (state.ui.marked.size > 0) {
		const visible = new Set(visibleSessions(state).map(s => s.name));
		return [...state.ui.marked].filter(name => visible.has(name));
	}
	const selected = selectedSession(state);
	return selected ? [selected.name] : [];
}

function notice(store: AppStore, text: string): void {
	store.dispatch({type: 'notice/set', notice: {level: 'info', text, at: Date.now()}});
}

type SessionCommand = Extract<Command, 'session.focus' | 'session.resume' | 'session.stop' | 'session.purge' | 'session.new' | 'row.mark'>;

function sessionCommand(command: SessionCommand, store: AppStore, actions: UiActions): void {
	const state = store.getState();
	const selected = selectedSession(state);
	switch (command) {
		case 'session.focus':
			if (selected) actions.focus(selected.name);
			return;
		case 'session.resume':
			if (selected) actions.resume(selected.name);
			return;
		case 'session.stop': {
			const names = targets(state);
			if (names.length > 0) actions.stop(names);
			store.dispatch({type: 'mark/clear'});
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

function conversationCommand(command: Extract<Command, `conversation.${string}`>, store: AppStore, actions: UiActions): void {
	const conversation = selectedConversation(store.getState());
	if (!conversation) return notice(store, 'no conversation selected');
	const ref = {agent: conversation.agent, id: conversation.id};
	if (command === 'conversation.adopt') actions.adopt(ref);
	else if (command === 'conversation.resume') actions.resumeConversation(ref);
	else if (command === 'conversation.purge') actions.openPurgeConversation(ref);
}

/** Carry out a command. Reads the store at call time, never a value captured at render (STYLE 4.4). */
export function runCommand(command: Command, store: AppStore, actions: UiActions): void {
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
		case 'filter.start':
			return store.dispatch({type: 'mode/set', mode: 'filter'});
		case 'view.toggleFindings':
			return store.dispatch({type: 'mode/set', mode: mode === 'findings' ? 'sessions' : 'findings'});
		case 'view.conversations':
			return store.dispatch({type: 'mode/set', mode: mode === 'conversations' ? 'sessions' : 'conversations'});
		case 'help.toggle':
			return store.dispatch(mode === 'help' ? {type: 'mode/back'} : {type: 'mode/set', mode: 'help'});
		case 'app.back':
			return store.dispatch(mode === 'help' ? {type: 'mode/back'} : {type: 'mode/set', mode: 'sessions'});
		case 'app.refresh':
			return actions.refresh();
		case 'app.quit':
			return actions.quit();
		case 'purge.undo':
			return actions.undoPurge();
		case 'finding.fix':
			return actions.applyFix(store.getState().ui.findingsCursor);
		case 'conversation.adopt':
		case 'conversation.resume':
		case 'conversation.purge':
			return conversationCommand(command, store, actions);
		case 'session.focus':
		case 'session.resume':
		case 'session.stop':
		case 'session.purge':
		case 'session.new':
		case 'row.mark':
			return sessionCommand(command, store, actions);
	}
}

const TEXT_MODES = new Set(['filter', 'purge', 'new']);

/** The list/help key handler. Inactive while a text field or dialog owns the keyboard. */
export function useCommands(isActive: boolean): void {
	const {store, actions} = useApp();
	useInput(
		(input, key) => {
			const state = store.getState();
			if (TEXT_MODES.has(state.ui.mode)) return;
			const command = resolveCommand(state.ui.mode, input, key);
			if (command) runCommand(command, store, actions);
		},
		{isActive},
	);
}

/** The filter field's key handler: typing edits the filter, enter keeps it, esc clears it. */
export function useFilterInput(isActive: boolean): void {
	const {store, actions} = useApp();
	useInput(
		(input, key) => {
			const {filter} = store.getState().ui;
			if (key.escape) {
				store.dispatch({type: 'filter/set', text: ''});
				store.dispatch({type: 'mode/back'});
			} else if (key.return) {
				store.dispatch({type: 'mode/back'});
			} else if (key.backspace || key.delete) {
				store.dispatch({type: 'filter/set', text: filter.slice(0, -1)});
			} else if (key.ctrl && input === 'c') {
				actions.quit();
			} else if (input && !key.ctrl && !key.meta) {
				// An Enter in the chunk keeps the filter, as a lone Enter does.
				const {text, entered} = typedChunk(input);
				store.dispatch({type: 'filter/set', text: filter + text});
				if (entered) store.dispatch({type: 'mode/back'});
			}
		},
		{isActive},
	);
}
