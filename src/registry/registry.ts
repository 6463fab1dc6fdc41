import {
	isMuxKind,
	MUX_KINDS,
	type AgentId,
	type AuditOutcome,
	type AuditRecord,
	type MuxKind,
	type SessionRecord,
	type SessionStatus,
} from '../domain/types.js';
import {openRegistryDb, type RegistryDb} from './db.js';

interface SessionRow {
	id: number;
	name: string;
	agent: string;
	cwd: string;
	mux: string | null;
	pane_id: string | null;
	agent_session_id: string | null;
	status: string;
	epoch: number;
	created_at: number;
	updated_at: number;
	version: number;
	extra: string;
}

/** `SessionRow`'s columns in order, for raw (array) rows. */
const SESSION_COLUMNS = 'id, name, agent, cwd, mux, pane_id, agent_session_id, status, epoch, created_at, updated_at, version, extra';
type SessionTuple = [
	SessionRow['id'],
	SessionRow['name'],
	SessionRow['agent'],
	SessionRow['cwd'],
	SessionRow['mux'],
	SessionRow['pane_id'],
	SessionRow['agent_session_id'],
	SessionRow['status'],
	SessionRow['epoch'],
	SessionRow['created_at'],
	SessionRow['updated_at'],
	SessionRow['version'],
	SessionRow['extra'],
];

interface AuditRow {
	id: number;
	at: number;
	session: string | null;
	action: string;
	step: string | null;
	outcome: string;
	detail: string;
}

export interface NewSession {
	readonly name: string;
	readonly agent: AgentId;
	readonly cwd: string;
	readonly mux?: MuxKind | null;
	readonly paneId?: string | null;
	readonly agentSessionId?: string | null;
	readonly status: SessionStatus;
	readonly epoch: number;
	readonly extra?: Record<string, unknown>;
}

/** The fields an update may change; absent keys are left as they are. */
export type SessionPatch = Partial<Pick<SessionRecord, 'mux' | 'paneId' | 'agentSessionId' | 'status' | 'cwd' | 'extra'>>;

export interface AuditEntry {
	readonly session: string | null;
	readonly action: string;
	readonly step?: string | null;
	readonly outcome: AuditOutcome;
	readonly detail?: Record<string, unknown>;
}

function parseJson(text: string): Record<string, unknown> {
	try {
		const value: unknown = JSON.parse(text);
		return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
	} catch {
		return {};
	}
}

/**
 * The registry's check on a row's multiplexer (migration 2 moved it out of SQL): one of
 * MUX_KINDS or none. Reading stays lenient: a kind a newer mam-tui wrote decodes to null.
 */
function checkMux(mux: unknown): MuxKind | null {
	if (mux === null || mux === undefined) return null;
	if (!isMuxKind(mux)) throw new Error(`unknown multiplexer ${JSON.stringify(mux)} (known: ${MUX_KINDS.join(', ')})`);
	return mux;
}

function toRecord(row: SessionRow): SessionRecord {
	// A row written by a newer mam-tui may name an agent this one does not know; it is kept as-is
	// rather than crash: callers check with isAgentId and report "unknown agent".
	const agent = row.agent as AgentId;
	return {
		id: row.id,
		name: row.name,
		agent,
		cwd: row.cwd,
		mux: isMuxKind(row.mux) ? row.mux : null,
		paneId: row.pane_id,
		agentSessionId: row.agent_session_id,
		status: row.status as SessionStatus,
		epoch: row.epoch,
		createdAt: row.created_at,
		updatedAt: row.updated_at,
		version: row.version,
		extra: parseJson(row.extra),
	};
}

/** Thrown when an update lost a race with another mam-tui process. */
export class ConflictError extends Error {
	readonly sessionName: string;
	constructor(sessionName: string) {
		super(`session ${sessionName} was changed by another mam-tui process; reload and try again`);
		this.sessionName = sessionName;
		this.name = 'ConflictError';
	}
}

/**
 * mam-tui's own store (SPEC 2): sessions and the audit log. Every statement uses bound
 * parameters; every read-modify-write runs in an IMMEDIATE transaction so two processes
 * never lose each other's update.
 */
export class Registry {
	private readonly db: RegistryDb;
	private readonly now: () => number;

	private constructor(db: RegistryDb, now: () => number) {
		this.db = db;
		this.now = now;
	}

	static open(file: string, now: () => number = Date.now): Registry {
		return new Registry(openRegistryDb(file), now);
	}

	close(): void {
		if (this.db.open) this.db.close();
	}

	list(): SessionRecord[] {
		// Raw rows (arrays) in a fixed column order: better-sqlite3 builds an object per row through
		// V8's API, which for 500 rows cost about as much again as the query.
		const rows = this.db.prepare(`SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY id`).raw(true).all() as SessionTuple[];
		return rows.map(([id, name, agent, cwd, mux, pane_id, agent_session_id, status, epoch, created_at, updated_at, version, extra]) =>
			toRecord({id, name, agent, cwd, mux, pane_id, agent_session_id, status, epoch, created_at, updated_at, version, extra}),
		);
	}

	get(name: string): SessionRecord | undefined {
		const row = this.db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE name = ?').get(name);
		return row ? toRecord(row) : undefined;
	}

	getById(id: number): SessionRecord | undefined {
		const row = this.db.prepare<[number], SessionRow>('SELECT * FROM sessions WHERE id = ?').get(id);
		return row ? toRecord(row) : undefined;
	}

	findByPin(agent: AgentId, agentSessionId: string): SessionRecord[] {
		return this.db
			.prepare<[string, string], SessionRow>('SELECT * FROM sessions WHERE agent = ? AND agent_session_id = ?')
			.all(agent, agentSessionId)
			.map(toRecord);
	}

	/** Insert a session; a taken name throws (names are unique). */
	insert(session: NewSession): SessionRecord {
		const at = this.now();
		const info = this.db
			.prepare(
				`INSERT INTO sessions (name, agent, cwd, mux, pane_id, agent_session_id, status, epoch, created_at, updated_at, extra)
				 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			)
			.run(
				session.name,
				session.agent,
				session.cwd,
				checkMux(session.mux),
				session.paneId ?? null,
				session.agentSessionId ?? null,
				session.status,
				session.epoch,
				at,
				at,
				JSON.stringify(session.extra ?? {}),
			);
		const created = this.getById(Number(info.lastInsertRowid));
		if (!created) throw new Error(`session ${session.name} vanished right after insert`);
		return created;
	}

	/** A free name based on `base` (`base`, `base-2`, and so on). */
	uniqueName(base: string): string {
		const taken = new Set(
			this.db
				.prepare<[string, string], {name: string}>("SELECT name FROM sessions WHERE name = ? OR name LIKE ? ESCAPE '\\'")
				.all(base, `${base.replace(/[\\%_]/g, m => `\\${m}`)}-%`)
				.map(r => r.name),
		);
		if (!taken.has(base)) return base;
		for (let i = 2; ; i++) if (!taken.has(`${base}-${i}`)) return `${base}-${i}`;
	}

	/**
	 * Apply `patch` to the session. With `expectVersion`, the update happens only if nobody
	 * changed the row since it was read (else ConflictError): a compare-and-set across processes.
	 */
	update(id: number, patch: SessionPatch, expectVersion?: number): SessionRecord {
		const run = this.db.transaction(() => {
			const current = this.getById(id);
			if (!current) throw new Error(`session #${id} does not exist`);
			if (expectVersion !== undefined && current.version !== expectVersion) throw new ConflictError(current.name);
			const next = {...current, ...patch};
			this.db
				.prepare(
					`UPDATE sessions SET mux = ?, pane_id = ?, agent_session_id = ?, status = ?, cwd = ?, extra = ?,
					 updated_at = ?, version = version + 1 WHERE id = ?`,
				)
				.run(checkMux(next.mux), next.paneId, next.agentSessionId, next.status, next.cwd, JSON.stringify(next.extra), this.now(), id);
			const updated = this.getById(id);
			if (!updated) throw new Error(`session #${id} vanished during update`);
			return updated;
		});
		return run.immediate();
	}

	/** Read-modify-write of the extra JSON in one IMMEDIATE transaction. */
	updateExtra(id: number, change: (extra: Record<string, unknown>) => Record<string, unknown>): SessionRecord {
		const run = this.db.transaction(() => {
			const current = this.getById(id);
			if (!current) throw new Error(`session #${id} does not exist`);
			return this.update(id, {extra: change({...current.extra})});
		});
		return run.immediate();
	}

	/** Run `fn` in one IMMEDIATE transaction (nested calls join it). */
	transaction<T>(fn: () => T): T {
		return this.db.transaction(fn).immediate();
	}

	/**
	 * Changes whenever anyone commits: another connection (data_version) or this one
	 * (total_changes; data_version never moves for a connection's own writes, and a serve's stop or
	 * purge writes through the connection its view polls). A cheap "did anything change?" poll.
	 */
	changeStamp(): string {
		const ours = (this.db.prepare('SELECT total_changes() AS n').get() as {n: number}).n;
		return `${String(this.db.pragma('data_version', {simple: true}))}/${ours}`;
	}

	audit(entry: AuditEntry): void {
		this.db
			.prepare('INSERT INTO audit (at, session, action, step, outcome, detail) VALUES (?, ?, ?, ?, ?, ?)')
			.run(this.now(), entry.session, entry.action, entry.step ?? null, entry.outcome, JSON.stringify(entry.detail ?? {}));
	}

	auditLog(session?: string, limit = 200): AuditRecord[] {
		const rows =
			session === undefined
				? this.db.prepare<[number], AuditRow>('SELECT * FROM audit ORDER BY id DESC LIMIT ?').all(limit)
				: this.db.prepare<[string, number], AuditRow>('SELECT * FROM audit WHERE session = ? ORDER BY id DESC LIMIT ?').all(session, limit);
		return rows.reverse().map(row => ({
			id: row.id,
			at: row.at,
			session: row.session,
			action: row.action,
			step: row.step,
			outcome: row.outcome as AuditOutcome,
			detail: parseJson(row.detail),
		}));
	}
}
