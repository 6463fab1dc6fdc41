import type {MuxEvent, PaneScreen} from './types.js';

// What the control client's `%output` tells about each pane: which printed since its screen was
// read (only those are read again), the agent's last OSC 7501 state report (codex), and the
// screens read so far. tmux.ts feeds it output and listings and asks it which screens are stale.

/** How often at most the panes that printed are reported (`output` events): a spinner prints all the time. */
const OUTPUT_EVENT_MS = 250;
/** The OSC 7501 state report (codex); terminated by BEL or ST. */
const OSC_7501 = /\x1b\]7501;([^\x07\x1b]*)(?:\x07|\x1b\\)/g;

export interface TmuxScreensOptions {
	/** Report panes that printed (at most every OUTPUT_EVENT_MS), when anyone listens. */
	readonly emit: (event: MuxEvent) => void;
	readonly listening: () => boolean;
}

export class TmuxScreens {
	private readonly options: TmuxScreensOptions;
	/** Panes whose output reaches the control client (the windows of the session it is attached to). */
	private watched = new Set<string>();
	/** Watched panes that printed since their screen was last read. */
	private readonly printed = new Set<string>();
	private readonly screens = new Map<string, string>();
	private readonly oscStates = new Map<string, string>();
	/** An unterminated OSC 7501 at the end of a pane's last output, joined with its next. */
	private readonly oscTails = new Map<string, string>();
	private outputTimer: NodeJS.Timeout | undefined;
	private readonly outputPanes = new Set<string>();

	constructor(options: TmuxScreensOptions) {
		this.options = options;
	}

	/** A watched pane printed: remember it (its screen is read again), and any state report in it. */
	output(paneId: string, data: Buffer): void {
		this.printed.add(paneId);
		const text = (this.oscTails.get(paneId) ?? '') + data.toString('latin1');
		let last: string | undefined;
		for (const match of text.matchAll(OSC_7501)) last = match[1];
		if (last !== undefined) this.oscStates.set(paneId, Buffer.from(last, 'latin1').toString('utf8'));
		const open = text.lastIndexOf('\x1b]7501;');
		const tail = open >= 0 && !/[\x07]|\x1b\\/.test(text.slice(open + 7)) ? text.slice(open, open + 512) : undefined;
		if (tail) this.oscTails.set(paneId, tail);
		else this.oscTails.delete(paneId);
		this.outputPanes.add(paneId);
		if (this.outputTimer || !this.options.listening()) return;
		this.outputTimer = setTimeout(() => {
			this.outputTimer = undefined;
			const paneIds = [...this.outputPanes];
			this.outputPanes.clear();
			if (paneIds.length > 0) this.options.emit({type: 'output', paneIds});
		}, OUTPUT_EVENT_MS);
		this.outputTimer.unref();
	}

	/** A new control client: what was read before it watched may be stale. */
	attached(): void {
		this.screens.clear();
	}

	/** The control client went: no pane is watched. */
	detached(): void {
		this.watched = new Set();
	}

	/** After a listing: forget what is known about panes that are gone. */
	forgetAllBut(present: ReadonlySet<string>): void {
		for (const map of [this.screens, this.oscStates, this.oscTails]) for (const id of map.keys()) if (!present.has(id)) map.delete(id);
		for (const id of this.printed) if (!present.has(id)) this.printed.delete(id);
	}

	/** The panes the control client sees print now. */
	watch(watched: ReadonlySet<string>): void {
		// A pane that just came into view may have changed unseen: read it afresh.
		for (const id of watched) if (!this.watched.has(id)) this.screens.delete(id);
		this.watched = new Set(watched);
	}

	/**
	 * The visible screens, read again (by `capture`, all at once) only for panes that printed
	 * since the last read, or that the control client does not watch.
	 */
	async read(
		paneIds: readonly string[],
		watching: boolean,
		capture: (paneIds: readonly string[]) => Promise<ReadonlyMap<string, string>>,
	): Promise<{screens: ReadonlyMap<string, PaneScreen>; reads: number}> {
		const stale = paneIds.filter(id => !watching || !this.watched.has(id) || this.printed.has(id) || !this.screens.has(id));
		// Cleared before reading: output that arrives meanwhile marks the pane again.
		for (const id of stale) this.printed.delete(id);
		const texts = stale.length > 0 ? await capture(stale) : new Map<string, string>();
		for (const id of stale) {
			const text = texts.get(id);
			if (text !== undefined) this.screens.set(id, text);
			else this.screens.delete(id);
		}
		const out = new Map<string, PaneScreen>();
		for (const id of paneIds) {
			const text = this.screens.get(id);
			const osc = this.oscStates.get(id);
			if (text !== undefined) out.set(id, {text, ...(osc !== undefined ? {osc} : {})});
		}
		return {screens: out, reads: stale.length};
	}

	dispose(): void {
		clearTimeout(this.outputTimer);
	}
}
