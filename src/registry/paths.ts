import path from 'node:path';

export interface PathEnv {
	readonly env: Readonly<Record<string, string | undefined>>;
	readonly home: string;
}

/** The state dir: `$MAM_HOME`, else `$XDG_STATE_HOME/mam`, else `~/.local/state/mam`. */
export function stateDir({env, home}: PathEnv): string {
	if (env['MAM_HOME']) return path.resolve(env['MAM_HOME']);
	if (env['XDG_STATE_HOME']) return path.join(path.resolve(env['XDG_STATE_HOME']), 'mam');
	return path.join(home, '.local', 'state', 'mam');
}

/** `--registry PATH`, else `<state dir>/registry.db`. */
export function registryPath(option: string | undefined, pathEnv: PathEnv): string {
	if (option) return path.resolve(option);
	return path.join(stateDir(pathEnv), 'registry.db');
}

/** `$XDG_CONFIG_HOME/mam/config.yaml`, else `~/.config/mam/config.yaml`. */
export function configPath({env, home}: PathEnv): string {
	const base = env['XDG_CONFIG_HOME'] ? path.resolve(env['XDG_CONFIG_HOME']) : path.join(home, '.config');
	return path.join(base, 'mam', 'config.yaml');
}
