import {execFile, spawn, type ChildProcessWithoutNullStreams} from 'node:child_process';
import type {Logger} from '../system/logger.js';

// One tmux control-mode client (`tmux -C attach-session`), kept open: commands go down its stdin
// as lines in tmux's command grammar and come back as `%begin … %end|%error` blocks, in order;
// between blocks tmux sends notifications, `%output %<pane> <bytes>` among them. That is how
// mam-tui learns which panes printed (only those are read again) and sees what tmux keeps
// nowhere else: codex's `ESC ] 7501 ; state=…` reports.

/**
 * One argument in tmux's command grammar, so tmux parses it back to exactly `arg`: single quotes
 * when that is enough, else double quotes with `\` escapes. Nothing in it can end the command,
 * start another (`;`), expand (`$VAR`, `~`) or start a directive (`%if`), and a newline never
 * reaches the line-based protocol raw.
 */
export function quoteTmuxArg(arg: string): string {
	if (!/[\u0000-\u001f\u007f']/.test(arg)) return `'${arg}'`;
	let out = '"';
	for (const ch of arg) {
		const code = ch.codePointAt(0) ?? 0;
		if (ch === '\\' || ch === '"' || ch === '$') out += `\\${ch}`;
		else if (code < 0x20 || code === 0x7f) out += `\\${code.toString(8).padStart(3, '0')}`;
		else out += ch;
	}
	return `${out}"`;
}

/** A command line: every argument quoted (the command name too). */
export function tmuxCommandLine(argv: readonly string[]): string {
	return argv.map(quoteTmuxArg).join(' ');
}

/** `%output` data: tmux writes bytes below 0x20 and `\` as `\ooo`; everything else is raw bytes. */
export function decodeOutput(data: Buffer): Buffer {
	if (!data.includes(0x5c)) return data;
	const bytes: number[] = [];
	for (let i = 0; i < data.length; i++) {
		const byte = data[i] ?? 0;
		if (byte === 0x5c && i + 3 < data.length && /^[0-7]{3}$/.test(data.toString('latin1', i + 1, i + 4))) {
			bytes.push(parseInt(data.toString('latin1', i + 1, i + 4), 8));
			i += 3;
		} else bytes.push(byte);
	}
	return Buffer.from(bytes);
}

/**
 * `tmux -V` without loading execa (a one-shot `status` on tmux would load it for this alone):
 * `3.3a`, or undefined when tmux cannot be run (the caller then reports why its own way).
 */
export function tmuxVersion(bin: string, timeoutMs: number): Promise<string | undefined> {
	return new Promise(resolve => {
		execFile(bin, ['-V'], {timeout: timeoutMs}, (error, stdout) => {
			const version = String(stdout)
				.trim()
				.replace(/^tmux\s+/, '');
			resolve(error || !version ? undefined : version);
		});
	});
}

export interface ControlReply {
	readonly ok: boolean;
	/** The command's output (or its error message), one entry per line. */
	readonly lines: readonly string[];
}

export interface TmuxControlOptions {
	readonly bin: string;
	/** `-u` and the server flags (`-L name` / `-S path`). */
	readonly serverFlags: readonly string[];
	/** The environment for the client; TMUX and TMUX_PANE are dropped (tmux refuses to nest). */
	readonly env: Readonly<Record<string, string | undefined>>;
	readonly timeoutMs: number;
	readonly logger?: Logger;
	/** A pane printed: its id and the bytes (escapes included). */
	readonly onOutput: (paneId: string, data: Buffer) => void;
	/** tmux announced a layout change (a window or pane came or went, a session changed). */
	readonly onLayout: () => void;
	/** The client ended (server gone, session gone, killed). */
	readonly onClose: (reason: string) => void;
}

interface Pending {
	readonly resolve: (reply: ControlReply) => void;
	readonly reject: (error: Error) => void;
	readonly timer: NodeJS.Timeout;
}

/** Notifications after which the pane list may differ. */
const LAYOUT_NOTICES: ReadonlySet<string> = new Set([
	'%window-add',
	'%window-close',
	'%unlinked-window-add',
	'%unlinked-window-close',
	'%layout-change',
	'%sessions-changed',
	'%session-changed',
	'%window-pane-changed',
]);

/** A connected control-mode client; `connect` resolves once tmux has answered its attach. */
export class TmuxControl {
	private readonly options: TmuxControlOptions;
	private child: ChildProcessWithoutNullStreams | undefined;
	private readonly pending: Pending[] = [];
	private buffered: Buffer = Buffer.alloc(0);
	private block: {readonly id: string; readonly ours: boolean; readonly lines: string[]} | undefined;
	private closed = false;
	/** The session the client is attached to (`%session-changed $id name`). */
	session: string | undefined;

	constructor(options: TmuxControlOptions) {
		this.options = options;
	}

	get connected(): boolean {
		return this.child !== undefined && !this.closed;
	}

	/**
	 * Attach (`-f ignore-size`: a control client never resizes the user's windows; `-E`: nor
	 * rewrites the session's environment from mam-tui's own, which would take SSH_AUTH_SOCK or
	 * DISPLAY away from the user's next panes through `update-environment`). Resolves true
	 * once tmux answered the attach, false when it could not (no server, no session, no tmux).
	 */
	connect(): Promise<boolean> {
		const env: Record<string, string> = {};
		for (const [key, value] of Object.entries(this.options.env)) if (value !== undefined && key !== 'TMUX' && key !== 'TMUX_PANE') env[key] = value;
		return new Promise(resolve => {
			let settled = false;
			const settle = (ok: boolean) => {
				if (settled) return;
				settled = true;
				clearTimeout(timer);
				resolve(ok);
			};
			const timer = setTimeout(() => {
				settle(false);
				this.close('tmux control client did not answer its attach');
			}, this.options.timeoutMs);
			let child: ChildProcessWithoutNullStreams;
			try {
				child = spawn(this.options.bin, [...this.options.serverFlags, '-C', 'attach-session', '-E', '-f', 'ignore-size'], {env, stdio: 'pipe'});
			} catch (error) {
				this.options.logger?.debug('tmux control client could not start', error);
				this.closed = true;
				settle(false);
				return;
			}
			this.child = child;
			// The client never keeps mam-tui running: a command waiting for its answer has a timer that does.
			child.unref();
			for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as {unref?: () => void}).unref?.();
			// The attach's own block (not ours) arrives first; its end means the client is attached.
			this.onAttached = () => settle(true);
			child.stdout.on('data', (chunk: Buffer) => this.read(chunk));
			child.stderr.on('data', () => {});
			child.stdin.on('error', () => {});
			child.on('error', error => {
				this.options.logger?.debug('tmux control client failed', error.message);
				settle(false);
				this.close(error.message);
			});
			child.on('exit', () => {
				settle(false);
				this.close('tmux control client exited');
			});
		});
	}

	private onAttached: (() => void) | undefined;

	/** Run one command; rejects when the client is gone or tmux does not answer in time. */
	command(argv: readonly string[]): Promise<ControlReply> {
		const child = this.child;
		if (!child || this.closed) return Promise.reject(new Error('tmux control client not connected'));
		return new Promise((resolve, reject) => {
			const timer = setTimeout(() => {
				// tmux answers in order: one late answer means every later one is suspect too.
				this.close(`tmux did not answer ${argv[0] ?? ''} within ${this.options.timeoutMs} ms`);
			}, this.options.timeoutMs);
			this.pending.push({resolve, reject, timer});
			child.stdin.write(`${tmuxCommandLine(argv)}\n`);
		});
	}

	private read(chunk: Buffer): void {
		this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
		let start = 0;
		for (let nl = this.buffered.indexOf(0x0a, start); nl >= 0; nl = this.buffered.indexOf(0x0a, start)) {
			this.line(this.buffered.subarray(start, nl));
			start = nl + 1;
		}
		this.buffered = start === 0 ? this.buffered : Buffer.from(this.buffered.subarray(start));
	}

	private line(raw: Buffer): void {
		if (this.block) {
			const text = raw.toString('utf8');
			const [word, , id] = text.split(' ');
			if ((word === '%end' || word === '%error') && id === this.block.id) {
				const block = this.block;
				this.block = undefined;
				if (block.ours) this.answer({ok: word === '%end', lines: block.lines});
				else if (word === '%end') this.onAttached?.();
				else this.close(block.lines.join(' ') || 'tmux refused the attach');
				return;
			}
			this.block.lines.push(text);
			return;
		}
		if (raw.subarray(0, 8).toString('latin1') === '%output ') {
			const space = raw.indexOf(0x20, 8);
			if (space > 8) this.options.onOutput(raw.toString('latin1', 8, space), decodeOutput(raw.subarray(space + 1)));
			return;
		}
		const text = raw.toString('utf8');
		const word = text.split(' ', 1)[0] ?? '';
		if (word === '%begin') {
			const [, , id = '', flags = '0'] = text.split(' ');
			// Flag 1: the command came from this client (ours); 0: the attach on the command line.
			this.block = {id, ours: (Number(flags) & 1) === 1, lines: []};
		} else if (word === '%session-changed') {
			this.session = text.split(' ').slice(2).join(' ');
			this.options.onLayout();
		} else if (word === '%exit') {
			this.close(text.slice(6) || 'tmux control client detached');
		} else if (LAYOUT_NOTICES.has(word)) {
			this.options.onLayout();
		}
	}

	private answer(reply: ControlReply): void {
		const next = this.pending.shift();
		if (!next) return;
		clearTimeout(next.timer);
		next.resolve(reply);
	}

	/** Detach and forget; every command still waiting is rejected. Safe to call twice. */
	close(reason = 'closed'): void {
		if (this.closed) return;
		this.closed = true;
		for (const waiting of this.pending.splice(0)) {
			clearTimeout(waiting.timer);
			waiting.reject(new Error(reason));
		}
		const child = this.child;
		if (child && child.exitCode === null && child.signalCode === null) {
			child.stdin.end();
			child.kill('SIGTERM');
		}
		this.options.onClose(reason);
	}
}
