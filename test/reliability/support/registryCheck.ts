import '../../support/sqliteUri.js';
import Database from 'better-sqlite3';
import {Registry} from '../../../src/registry/registry.js';
import type {AuditRecord, SessionRecord} from '../../../src/domain/types.js';
import {SESSION_STATUSES} from '../../../src/domain/types.js';

export interface RegistryState {
	readonly integrity: string;
	readonly sessions: readonly SessionRecord[];
	readonly audit: readonly AuditRecord[];
}

/**
 * Open the registry the way the next mam-tui would (a killed writer's WAL is recovered), run
 * `PRAGMA integrity_check`, and read rows and audit through the product's Registry class, so a
 * registry that would not open again fails here.
 */
export function inspectRegistry(file: string): RegistryState {
	const db = new Database(file);
	let integrity: string;
	try {
		integrity = String(db.pragma('integrity_check', {simple: true}));
	} finally {
		db.close();
	}
	const registry = Registry.open(file);
	try {
		return {integrity, sessions: registry.list(), audit: registry.auditLog(undefined, 100_000)};
	} finally {
		registry.close();
	}
}

/** Rows that make sense: a known status, a version that only grows from 1, parseable extra. */
export function rowProblems(sessions: readonly SessionRecord[]): string[] {
	const problems: string[] = [];
	const names = new Set<string>();
	for (const s of sessions) {
		if (!(SESSION_STATUSES as readonly string[]).includes(s.status)) problems.push(`${s.name}: status ${s.status}`);
		if (!Number.isInteger(s.version) || s.version < 1) problems.push(`${s.name}: version ${s.version}`);
		if (names.has(s.name)) problems.push(`${s.name}: duplicate name`);
		names.add(s.name);
		if (typeof s.extra !== 'object') problems.push(`${s.name}: extra`);
	}
	return problems;
}
