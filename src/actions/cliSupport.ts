import {CliError, EXIT, type ExitCode} from '../domain/exitCodes.js';
import {assertNever} from '../domain/result.js';
import type {Refusal, SessionRef} from './types.js';

type Values = Readonly<Record<string, string | boolean | string[] | undefined>>;

/** The CLI exit code for a refusal (SPEC 3): in use 4, not found 3, bad input 2, else 1. */
export function exitCodeFor(refusal: Refusal): ExitCode {
	switch (refusal.kind) {
		case 'in-use':
		case 'live':
			return EXIT.inUse;
		case 'not-found':
			return EXIT.notFound;
		case 'bad-input':
		case 'unknown-agent':
			return EXIT.usage;
		case 'unsupported':
		case 'purged':
		case 'unpinned':
		case 'running':
		case 'cwd-missing':
		case 'not-resumable':
		case 'self-pane':
		case 'mux-mismatch':
		case 'not-running':
		case 'not-confirmed':
		case 'changed':
		case 'failed':
			return EXIT.failed;
		default:
			return assertNever(refusal.kind);
	}
}

/** A refusal as the error the CLI ends with. */
export function refusalError(refusal: Refusal): CliError {
	return new CliError(refusal.message, exitCodeFor(refusal));
}

function stringOption(values: Values, key: string): string | undefined {
	const value = values[key];
	return typeof value === 'string' ? value : undefined;
}

/** `NAME...` or `--agent A --id ID` (never both); usage errors exit 2. */
export function sessionRefsFrom(values: Values, positionals: readonly string[], command: string, allowMany = false): SessionRef[] {
	const agent = stringOption(values, 'agent');
	const id = stringOption(values, 'id');
	if (agent !== undefined || id !== undefined) {
		if (agent === undefined || id === undefined) throw new CliError(`${command}: --agent and --id go together`, EXIT.usage);
		if (positionals.length > 0) throw new CliError(`${command}: give a session NAME or --agent A --id ID, not both`, EXIT.usage);
		return [{agent, id}];
	}
	if (positionals.length === 0) throw new CliError(`${command}: which session? give its NAME (or --agent A --id ID)`, EXIT.usage);
	if (!allowMany && positionals.length > 1) throw new CliError(`${command}: one session at a time`, EXIT.usage);
	return positionals.map(name => ({name}));
}

/** Exactly one session: `NAME` or `--agent A --id ID`. */
export function sessionRefFrom(values: Values, positionals: readonly string[], command: string): SessionRef {
	const [ref] = sessionRefsFrom(values, positionals, command);
	if (!ref) throw new CliError(`${command}: which session?`, EXIT.usage);
	return ref;
}

/** A required `--key VALUE`. */
export function requiredOption(values: Values, key: string, command: string): string {
	const value = stringOption(values, key);
	if (value === undefined || value.length === 0) throw new CliError(`${command}: --${key} is required`, EXIT.usage);
	return value;
}

/** An optional `--key VALUE`. */
export function optionalOption(values: Values, key: string): string | undefined {
	return stringOption(values, key);
}

/** `--grace 2.5` → 2500 ms; positive and at most 600 s, else exit 2. */
export function secondsOption(values: Values, key: string): number | undefined {
	const raw = stringOption(values, key);
	if (raw === undefined) return undefined;
	const seconds = Number(raw);
	if (!/^\d+(\.\d+)?$/.test(raw.trim()) || !Number.isFinite(seconds) || seconds <= 0 || seconds > 600) {
		throw new CliError(`--${key} must be a number of seconds greater than 0 and at most 600 (got ${JSON.stringify(raw)})`, EXIT.usage);
	}
	return Math.round(seconds * 1000);
}
