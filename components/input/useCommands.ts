import {useInput} from 'ink';
import {useApp} from '../StoreContext.js';
import {resolveCommand, type Command} from './keymap.js';
import type {Action} from '../../src/store/reducer.js';
import type {AppState} from '../../src/store/state.js';
import type {Store} from '../../src/store/store.js';
import type {UiActions} from '../StoreContext.js';

/** Carry out a command. Reads the store at call time, never a value captured at render (STYLE 4.4). */
export function runCommand(command: Command, store: Store<AppState, Action>, actions: UiActions): void {
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
		case 'help.toggle':
			return store.dispatch(mode === 'help' ? {type: 'mode/back'} : {type: 'mode/set', mode: 'help'});
		case 'app.quit':
			return actions.quit();
	}
}

/** The list/help key handler. Inactive while a text field owns the keyboard. */
export function useCommands(): void {
	const {store, actions} = useApp();
	useInput(
		(input, key) => {
			const state = store.getState();
			if (state.ui.mode === 'help' && key.escape) {
				store.dispatch({type: 'mode/back'});
				return;
			}
			const command = resolveCommand(state.ui.mode, input, key);
			if (command) runCommand(command, store, actions);
		},
		{isActive: store.getState().ui.mode !== 'filter'},
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
				store.dispatch({type: 'filter/set', text: filter + input});
			}
		},
		{isActive},
	);
}
