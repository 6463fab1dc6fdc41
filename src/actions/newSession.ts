import fs from 'node:fs';
import path from 'node:path';
import {messageOf} from '../domain/result.js';
import type {SessionRecord} from '../domain/types.js';
import {adapterOf, audit, withExtraArgs} from './session.js';
import {refusal, type ActionDeps, type ActionResult} from './types.js';
import {withPaneServer} from '../registry/extra.js';
import {serverOfPane} from './paneServer.js';

export interface NewSessionRequest {
	readonly agent: string;
	readonly cwd: string;
	/** Default: `<agent>-<folder name>`, made unique. */
	readonly name?: string;
}

/** Names are shown in tables and typed to confirm a purge: one line, printable, not too long. */
export function checkSessionName(name: string): string | undefined {
	if (name.length === 0 || name.length > 64) return 'a session name needs 1 to 64 characters';
	if (/[\u0000-\u001f\u007f]/.test(name)) return 'a session name cannot contain control characters';
	if (name.trim() !== name) return 'a session name cannot start or end with spaces';
	return undefined;
}

/** The session's folder, resolved (realpath), or a refusal when it is not a directory. */
export function resolveCwd(cwd: string): ActionResult<string> {
	try {
		const real = fs.realpathSync(path.resolve(cwd));
		if (fs.statSync(real).isDirectory()) return {ok: true, value: real};
	} catch {
		// reported below
	}
	return refusal('bad-input', `${cwd} is not an existing folder`);
}

/** A free name: the one asked for (refused when taken), else `<agent>-<folder>` made unique. */
export function pickName(deps: ActionDeps, agent: string, cwd: string, wanted: string | undefined): ActionResult<string> {
	if (wanted === undefined) return {ok: true, value: deps.registry.uniqueName(`${agent}-${path.basename(cwd) || 'root'}`)};
	const bad = checkSessionName(wanted);
	if (bad) return refusal('bad-input', bad);
	if (deps.registry.get(wanted)) return refusal('bad-input', `a session named ${JSON.stringify(wanted)} already exists`);
	return {ok: true, value: wanted};
}

/**
 * Start a new conversation in a new pane and register it as running and unpinned, with epoch =
 * now: drift pins it once the agent writes its conversation (SPEC 5 `unpinned`).
 */
export async function newSession(deps: ActionDeps, request: NewSessionRequest): Promise<ActionResult<SessionRecord>> {
	const adapter = adapterOf(deps, request.agent);
	if (!adapter.ok) return adapter;
	const cwd = resolveCwd(request.cwd);
	if (!cwd.ok) return cwd;
	const name = pickName(deps, adapter.value.id, cwd.value, request.name);
	if (!name.ok) return name;
	const launch = adapter.value.spawn(deps.context, cwd.value);
	const argv = withExtraArgs(deps, adapter.value, launch.argv);
	// Taken before the pane opens, so the conversation the agent creates is never older than the epoch.
	const epoch = deps.now();
	const mux = await deps.mux();
	let paneId: string;
	try {
		paneId = await mux.openPane({argv, cwd: cwd.value, ...(launch.env ? {env: launch.env} : {}), title: name.value});
	} catch (error) {
		audit(deps, {session: name.value, action: 'new', outcome: 'failed', detail: {argv, cwd: cwd.value, message: messageOf(error)}});
		return refusal('failed', `could not open a ${mux.kind} pane: ${messageOf(error)}`);
	}
	const server = await serverOfPane(mux, paneId);
	const session = deps.registry.insert({
		name: name.value,
		agent: adapter.value.id,
		cwd: cwd.value,
		mux: mux.kind,
		paneId,
		status: 'running',
		epoch,
		extra: withPaneServer({}, server),
	});
	audit(deps, {session: session.name, action: 'new', outcome: 'ok', detail: {argv, cwd: cwd.value, paneId, mux: mux.kind}});
	return {ok: true, value: session};
}
