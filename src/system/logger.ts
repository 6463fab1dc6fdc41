import fs from 'node:fs';
import path from 'node:path';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<LogLevel, number> = {debug: 0, info: 1, warn: 2, error: 3};

export interface Logger {
	debug(message: string, detail?: unknown): void;
	info(message: string, detail?: unknown): void;
	warn(message: string, detail?: unknown): void;
	error(message: string, detail?: unknown): void;
}

export const silentLogger: Logger = {debug() {}, info() {}, warn() {}, error() {}};

/**
 * Ink owns stdout, so diagnostics go to a file in the state dir. Appends synchronously (lines
 * are rare and small); a log that cannot be written never breaks the app.
 */
export function createFileLogger(file: string, level: LogLevel): Logger {
	let broken = false;
	const write = (lvl: LogLevel, message: string, detail?: unknown) => {
		if (broken || RANK[lvl] < RANK[level]) return;
		const extra = detail === undefined ? '' : ` ${safeJson(detail)}`;
		try {
			fs.mkdirSync(path.dirname(file), {recursive: true, mode: 0o700});
			fs.appendFileSync(file, `${new Date().toISOString()} ${lvl.toUpperCase()} ${message}${extra}\n`, {mode: 0o600});
		} catch {
			broken = true;
		}
	};
	return {
		debug: (m, d) => write('debug', m, d),
		info: (m, d) => write('info', m, d),
		warn: (m, d) => write('warn', m, d),
		error: (m, d) => write('error', m, d),
	};
}

function safeJson(value: unknown): string {
	try {
		return JSON.stringify(value instanceof Error ? {message: value.message, stack: value.stack} : value);
	} catch {
		return String(value);
	}
}
