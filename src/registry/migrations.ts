/**
 * Ordered forward migrations. Index i moves the schema from version i to i+1
 * (`PRAGMA user_version`). Never edit a shipped entry; append a new one.
 */
export const MIGRATIONS: readonly string[] = [
	`
	CREATE TABLE sessions (
		id INTEGER PRIMARY KEY,
		name TEXT NOT NULL UNIQUE,
		agent TEXT NOT NULL,
		cwd TEXT NOT NULL,
		mux TEXT CHECK (mux IN ('herdr', 'tmux')),
		pane_id TEXT,
		agent_session_id TEXT,
		status TEXT NOT NULL CHECK (status IN ('running', 'stopped', 'purged')),
		epoch INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		version INTEGER NOT NULL DEFAULT 1,
		extra TEXT NOT NULL DEFAULT '{}'
	);
	CREATE INDEX sessions_agent_pin ON sessions (agent, agent_session_id);
	CREATE TABLE audit (
		id INTEGER PRIMARY KEY,
		at INTEGER NOT NULL,
		session TEXT,
		action TEXT NOT NULL,
		step TEXT,
		outcome TEXT NOT NULL,
		detail TEXT NOT NULL DEFAULT '{}'
	);
	CREATE INDEX audit_session ON audit (session, at);
	`,
	// The multiplexer kinds are data (MUX_KINDS in src/domain/types.ts): the registry checks a row's
	// mux against that list when it writes one (checkMux), so a new kind needs no migration. SQLite
	// cannot drop a CHECK: the table is rebuilt without the one on mux, every row and id kept.
	`
	CREATE TABLE sessions_next (
		id INTEGER PRIMARY KEY,
		name TEXT NOT NULL UNIQUE,
		agent TEXT NOT NULL,
		cwd TEXT NOT NULL,
		mux TEXT,
		pane_id TEXT,
		agent_session_id TEXT,
		status TEXT NOT NULL CHECK (status IN ('running', 'stopped', 'purged')),
		epoch INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		version INTEGER NOT NULL DEFAULT 1,
		extra TEXT NOT NULL DEFAULT '{}'
	);
	INSERT INTO sessions_next (id, name, agent, cwd, mux, pane_id, agent_session_id, status, epoch, created_at, updated_at, version, extra)
		SELECT id, name, agent, cwd, mux, pane_id, agent_session_id, status, epoch, created_at, updated_at, version, extra FROM sessions;
	DROP TABLE sessions;
	ALTER TABLE sessions_next RENAME TO sessions;
	CREATE INDEX sessions_agent_pin ON sessions (agent, agent_session_id);
	`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;
