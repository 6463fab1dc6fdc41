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
];

export const SCHEMA_VERSION = MIGRATIONS.length;
