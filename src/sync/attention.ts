import type {NotifyMode} from '../config/config.js';
import {paneStatus} from '../domain/paneStatus.js';
import type {Pane} from '../domain/types.js';
import type {SessionLive} from '../store/state.js';
import type {Exec} from '../system/exec.js';
import type {Logger} from '../system/logger.js';

export interface AttentionDeps {
	readonly notify: NotifyMode;
	/** Starts `notify-send` (argv only). */
	readonly exec: Exec;
	/** Rings the terminal bell (the dashboard's terminal). */
	readonly bell?: () => void;
	/** A one-line note for the status bar (a missing notify-send). */
	readonly note: (text: string) => void;
	readonly logger?: Logger;
}

/** Watches the live statuses and calls the user when a session turns blocked. */
export interface Attention {
	/** Compare with the last statuses; ring and notify for every session (or agent pane outside the registry) that just turned blocked. */
	observe(live: Readonly<Record<string, SessionLive>>, untracked?: readonly Pane[]): void;
}

function ringBell(): void {
	// BEL moves nothing on screen, so it may be written beside Ink's frames.
	if (process.stdout.isTTY) process.stdout.write('\x07');
}

/**
 * The first look is the baseline: sessions already blocked when the dashboard opens sort to the
 * top but do not ring (the user is looking). After that each transition to blocked rings once
 * (`bell`, `desktop`), and with `desktop` also sends `notify-send`; without notify-send the
 * status bar says so once, and nothing fails.
 */
export function createAttention(deps: AttentionDeps): Attention {
	let before: ReadonlyMap<string, string> | undefined;
	let noNotifier = false;
	const bell = deps.bell ?? ringBell;

	const desktop = (names: readonly string[], evidenceOf: ReadonlyMap<string, string | undefined>) => {
		const evidence = names.map(n => evidenceOf.get(n)).find(Boolean) ?? '';
		const title = names.length === 1 ? `mam-tui: ${names[0]} needs you` : `mam-tui: ${names.length} sessions need you`;
		void deps.exec('notify-send', ['--app-name=mam-tui', '--', title, evidence], {timeoutMs: 5000}).then(result => {
			if (!result.failure && result.exitCode === 0) return;
			if (result.failure && /ENOENT|not found/i.test(result.failure)) {
				if (noNotifier) return;
				noNotifier = true;
				deps.note('notify-send not found: no desktop notifications (the bell still rings; install libnotify-bin)');
				return;
			}
			deps.logger?.debug('notify-send failed', result.failure ?? result.stderr);
		});
	};

	return {
		observe(live, untracked = []) {
			const now = new Map(Object.entries(live).map(([name, entry]) => [name, entry.liveStatus]));
			const evidenceOf = new Map(Object.entries(live).map(([name, entry]) => [name, entry.pane?.detection?.evidence]));
			for (const pane of untracked) {
				const name = `pane ${pane.id}${pane.agent ? ` (${pane.agent})` : ''}`;
				now.set(name, paneStatus(pane));
				evidenceOf.set(name, pane.detection?.evidence);
			}
			const previous = before;
			before = now;
			if (!previous || deps.notify === 'off') return;
			const turned = [...now].filter(([name, status]) => status === 'blocked' && previous.get(name) !== 'blocked').map(([name]) => name);
			if (turned.length === 0) return;
			bell();
			if (deps.notify === 'desktop' && !noNotifier) desktop(turned, evidenceOf);
		},
	};
}
