import {useInput} from 'ink';
import {AGENT_IDS} from '../../src/domain/types.js';
import {useApp} from '../StoreContext.js';
import {typedChunk} from './typedChunk.js';

/**
 * The purge dialog owns the keyboard: typed characters go to the confirmation field, arrows
 * scroll the plan, enter submits, esc cancels. Only the exact expected text calls confirmPurge;
 * anything else cancels (SPEC 6.3) — and the action checks the text again.
 */
export function usePurgeInput(isActive: boolean): void {
	const {store, actions} = useApp();
	/** Enter: only the exact expected text, with the plan loaded and nothing refused, confirms. */
	const submit = (typed: string) => {
		const dialog = store.getState().purge;
		if (!dialog) return;
		const confirmed = !dialog.loading && !dialog.refusal && typed === dialog.expected;
		if (confirmed) {
			actions.confirmPurge(typed);
		} else {
			const why = dialog.refusal ? 'purge refused' : 'purge cancelled: the typed text did not match';
			store.dispatch({type: 'notice/set', notice: {level: 'info', text: why, at: Date.now()}});
		}
		store.dispatch({type: 'purge/close'});
	};
	useInput(
		(input, key) => {
			const dialog = store.getState().purge;
			if (!dialog) return;
			if (key.escape || (key.ctrl && input === 'c')) {
				store.dispatch({type: 'purge/close'});
				store.dispatch({type: 'notice/set', notice: {level: 'info', text: 'purge cancelled', at: Date.now()}});
			} else if (key.upArrow || key.pageUp) {
				store.dispatch({type: 'purge/scroll', delta: key.pageUp ? -10 : -1});
			} else if (key.downArrow || key.pageDown) {
				store.dispatch({type: 'purge/scroll', delta: key.pageDown ? 10 : 1});
			} else if (key.return) {
				submit(dialog.typed);
			} else if (key.backspace || key.delete) {
				store.dispatch({type: 'purge/type', typed: dialog.typed.slice(0, -1)});
			} else if (input && !key.ctrl && !key.meta && !key.tab) {
				// An Enter in the chunk submits what was typed, with the same exact-match check.
				const {text, entered} = typedChunk(input);
				if (entered) submit(dialog.typed + text);
				else store.dispatch({type: 'purge/type', typed: dialog.typed + text});
			}
		},
		{isActive},
	);
}

/** The new-session dialog: tab switches field, ↑/↓ pick the agent, typing edits the cwd. */
export function useNewSessionInput(isActive: boolean): void {
	const {store, actions} = useApp();
	useInput(
		(input, key) => {
			const dialog = store.getState().newDialog;
			if (!dialog) return;
			const update = (patch: Partial<typeof dialog>) => store.dispatch({type: 'new/update', dialog: {...dialog, ...patch}});
			const submit = (agentIndex: number, cwd: string) => {
				const agent = AGENT_IDS[agentIndex];
				if (agent && cwd.trim()) actions.newSession(agent, cwd.trim());
				store.dispatch({type: 'new/close'});
			};
			if (key.escape || (key.ctrl && input === 'c')) {
				store.dispatch({type: 'new/close'});
			} else if (key.tab) {
				update({field: dialog.field === 'agent' ? 'cwd' : 'agent'});
			} else if (key.return) {
				submit(dialog.agentIndex, dialog.cwd);
			} else if (dialog.field === 'agent' && (key.upArrow || key.downArrow)) {
				const delta = key.upArrow ? -1 : 1;
				update({agentIndex: (dialog.agentIndex + delta + AGENT_IDS.length) % AGENT_IDS.length});
			} else if (dialog.field === 'cwd' && (key.backspace || key.delete)) {
				update({cwd: dialog.cwd.slice(0, -1)});
			} else if (dialog.field === 'cwd' && input && !key.ctrl && !key.meta) {
				const {text, entered} = typedChunk(input);
				if (entered) submit(dialog.agentIndex, dialog.cwd + text);
				else update({cwd: dialog.cwd + text});
			}
		},
		{isActive},
	);
}
