/** Where the installed bin's launcher keeps the user's NODE_EXTRA_CA_CERTS (src/build/bundle.mjs). */
export const SAVED_EXTRA_CA_CERTS = 'MAM_TUI_NODE_EXTRA_CA_CERTS';

/**
 * The bin starts node with NODE_EXTRA_CA_CERTS empty, because Node 20 loads those certificates
 * at start-up and mam-tui opens no TLS connection. Put the user's value back before anything
 * runs, so the processes mam-tui starts (an agent's own CLI may) see it as the user set it.
 */
export function restoreLauncherEnv(env: NodeJS.ProcessEnv = process.env): void {
	const saved = env[SAVED_EXTRA_CA_CERTS];
	if (saved === undefined) return;
	delete env[SAVED_EXTRA_CA_CERTS];
	env['NODE_EXTRA_CA_CERTS'] = saved;
}
