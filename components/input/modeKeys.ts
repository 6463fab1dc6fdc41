import {AGENT_IDS} from '../../src/domain/types.js';
import type {Mode} from '../../src/store/state.js';
import {planLines, purgeRoom} from '../screens/PurgeDialog.js';
import {notice, runCommand, type KeyContext} from './commands.js';
import {resolveBinding, type KeyState} from './keymap.js';

/** One key (or, in a text field, one run of typed characters) as the router hands it on. */
export interface KeyEvent {
	readonly input: string;
	readonly key: KeyState;
	/** It came in a chunk with other keys (typed fast, key repeat, a paste), not on its own. */
	readonly chunked: boolean;
}

/** After this key: go on with the chunk's next key, or drop the rest of the chunk. */
export type Next = 'continue' | 'end';

const isText = (ev: KeyEvent) => ev.input !== '' && !ev.key.ctrl && !ev.key.meta && !ev.key.tab && !ev.key.return && !ev.key.escape;
const isCtrlC = (ev: KeyEvent) => Boolean(ev.key.ctrl) && ev.input === 'c';

/** The lists and help: the keymap decides, and its chunk rule says whether the chunk goes on. */
function listKey(ev: KeyEvent, ctx: KeyContext): Next {
	const binding = resolveBinding(ctx.store.getState().ui.mode, ev.input, ev.key, ctx.keymap);
	if (!binding) return 'continue';
	runCommand(binding.command, ctx);
	return binding.chunk === 'once' ? 'end' : 'continue';
}

/** The filter field: typing edits the filter of the list it came from, enter keeps it, esc clears it. */
function filterKey(ev: KeyEvent, {store, actions}: KeyContext): Next {
	const {ui} = store.getState();
	const text = ui.previousMode === 'conversations' ? ui.conversationFilter : ui.filter;
	if (ev.key.escape) {
		store.dispatch({type: 'filter/set', text: ''});
		store.dispatch({type: 'mode/back'});
	} else if (ev.key.return) {
		store.dispatch({type: 'mode/back'});
	} else if (ev.key.backspace || ev.key.delete) {
		store.dispatch({type: 'filter/set', text: text.slice(0, -1)});
	} else if (isCtrlC(ev)) {
		actions.quit();
		return 'end';
	} else if (isText(ev)) {
		store.dispatch({type: 'filter/set', text: text + ev.input});
	}
	return 'continue';
}

/**
 * The purge dialog owns the keyboard: typed characters go to the confirmation field, arrows
 * scroll the plan, enter submits, esc cancels. Only the exact expected text calls confirmPurge;
 * anything else cancels (SPEC 6.3) — and the action checks the text again.
 */
function purgeKey(ev: KeyEvent, {store, actions, viewport}: KeyContext): Next {
	const dialog = store.getState().purge;
	if (!dialog) return 'end';
	const {width, height, home} = viewport();
	const max = Math.max(0, planLines(dialog, home, width).length - purgeRoom(height));
	const scroll = (delta: number) => {
		const next = Math.max(0, Math.min(max, dialog.scroll + delta));
		const reached = next >= max && !dialog.readToEnd;
		if (next !== dialog.scroll || reached) store.dispatch({type: 'purge/scroll', delta: next - dialog.scroll, readToEnd: next >= max});
	};
	if (ev.key.escape || isCtrlC(ev)) {
		store.dispatch({type: 'purge/close'});
		notice(store, 'purge cancelled');
		return 'end';
	}
	if (ev.key.upArrow || ev.key.pageUp) {
		scroll(ev.key.pageUp ? -10 : -1);
	} else if (ev.key.downArrow || ev.key.pageDown) {
		scroll(ev.key.pageDown ? 10 : 1);
	} else if (ev.key.return) {
		const confirmed = !dialog.loading && !dialog.refusal && dialog.typed === dialog.expected;
		// A plan taller than the dialog is confirmed only once all of it was on screen.
		if (confirmed && max > 0 && !dialog.readToEnd) {
			notice(store, 'not yet: scroll to the end of the plan first (↓ or PgDn), then press enter');
			return 'end';
		}
		if (confirmed) actions.confirmPurge(dialog.typed);
		else notice(store, dialog.refusal ? 'purge refused' : 'purge cancelled: the typed text did not match');
		store.dispatch({type: 'purge/close'});
		return 'end';
	} else if (ev.key.backspace || ev.key.delete) {
		store.dispatch({type: 'purge/type', typed: dialog.typed.slice(0, -1)});
	} else if (isText(ev)) {
		store.dispatch({type: 'purge/type', typed: dialog.typed + ev.input});
	}
	return 'continue';
}

/** The new-session dialog: tab switches field, ↑/↓ pick the agent, typing edits the cwd. */
function newKey(ev: KeyEvent, {store, actions}: KeyContext): Next {
	const dialog = store.getState().newDialog;
	if (!dialog) return 'end';
	const update = (patch: Partial<typeof dialog>) => store.dispatch({type: 'new/update', dialog: {...dialog, ...patch}});
	if (ev.key.escape || isCtrlC(ev)) {
		store.dispatch({type: 'new/close'});
		return 'end';
	}
	if (ev.key.return) {
		const agent = AGENT_IDS[dialog.agentIndex];
		if (agent && dialog.cwd.trim()) actions.newSession(agent, dialog.cwd.trim());
		store.dispatch({type: 'new/close'});
		return 'end';
	}
	if (ev.key.tab) {
		update({field: dialog.field === 'agent' ? 'cwd' : 'agent'});
	} else if (dialog.field === 'agent' && (ev.key.upArrow || ev.key.downArrow)) {
		const delta = ev.key.upArrow ? -1 : 1;
		update({agentIndex: (dialog.agentIndex + delta + AGENT_IDS.length) % AGENT_IDS.length});
	} else if (dialog.field === 'cwd' && (ev.key.backspace || ev.key.delete)) {
		update({cwd: dialog.cwd.slice(0, -1)});
	} else if (dialog.field === 'cwd' && isText(ev)) {
		update({cwd: dialog.cwd + ev.input});
	}
	return 'continue';
}

/**
 * A y/n confirmation (stop, park): `y` (or the action's key again) confirms, `n`/esc cancels. Only
 * a key pressed on its own answers: a chunk (a paste that happens to hold a `y`) is ignored.
 */
function confirmKey(ev: KeyEvent, ctx: KeyContext, what: 'stop' | 'park', command: string, confirm: () => void): Next {
	const cancel = () => {
		ctx.store.dispatch({type: `${what}/close`});
		notice(ctx.store, `${what} cancelled`);
	};
	if (ev.key.escape || isCtrlC(ev)) {
		cancel();
		return 'end';
	}
	if (ev.chunked) return 'end';
	// n cancels first, whatever the action's key was rebound to.
	if (ev.input === 'n' || ev.input === 'N') {
		cancel();
		return 'end';
	}
	const again = resolveBinding('sessions', ev.input, ev.key, ctx.keymap)?.command === command;
	if (ev.input === 'y' || ev.input === 'Y' || again) {
		ctx.store.dispatch({type: `${what}/close`});
		ctx.store.dispatch({type: 'mark/clear'});
		confirm();
	}
	return 'end';
}

function stopKey(ev: KeyEvent, ctx: KeyContext): Next {
	const dialog = ctx.store.getState().stopDialog;
	if (!dialog) return 'end';
	return confirmKey(ev, ctx, 'stop', 'session.stop', () => ctx.actions.stop(dialog.targets.map(t => t.name)));
}

function parkKey(ev: KeyEvent, ctx: KeyContext): Next {
	const dialog = ctx.store.getState().parkDialog;
	if (!dialog) return 'end';
	return confirmKey(ev, ctx, 'park', 'session.park', () => ctx.actions.park(dialog.names));
}

/**
 * The trash view's typed confirmation: typing fills the field, enter empties only on the exact
 * text, anything else (or esc) cancels. Emptying is the one hard delete of the trash.
 */
function trashEmptyKey(ev: KeyEvent, {store, actions}: KeyContext): Next {
	const dialog = store.getState().trashEmpty;
	if (!dialog) return 'end';
	if (ev.key.escape || isCtrlC(ev)) {
		store.dispatch({type: 'trashEmpty/close'});
		notice(store, 'empty cancelled');
		return 'end';
	}
	if (ev.key.return) {
		store.dispatch({type: 'trashEmpty/close'});
		if (dialog.typed === dialog.expected) actions.emptyTrash(dialog.purgeId);
		else notice(store, 'empty cancelled: the typed text did not match');
		return 'end';
	}
	if (ev.key.backspace || ev.key.delete) store.dispatch({type: 'trashEmpty/type', typed: dialog.typed.slice(0, -1)});
	else if (isText(ev)) store.dispatch({type: 'trashEmpty/type', typed: dialog.typed + ev.input});
	return 'continue';
}

/** The handler for each mode: exactly one owns the keyboard at a time. */
export const MODE_KEYS: Readonly<Record<Mode, (ev: KeyEvent, ctx: KeyContext) => Next>> = {
	sessions: listKey,
	findings: listKey,
	conversations: listKey,
	trash: listKey,
	help: listKey,
	filter: filterKey,
	purge: purgeKey,
	new: newKey,
	stop: stopKey,
	park: parkKey,
	trashEmpty: trashEmptyKey,
};

/** Modes with a text field: a run of typed characters reaches it as one event. */
export const TEXT_MODES: ReadonlySet<Mode> = new Set(['filter', 'purge', 'new', 'trashEmpty']);
