/**
 * The wire between `mam-tui` and `mam-tui serve --stdio` on another machine: JSON-RPC 2.0, one
 * JSON object per line, over the stdin and stdout of the user's own ssh. Names, ids and paths
 * travel only as JSON values.
 *
 * client -> serve: `hello` {protocols} -> {program, version, protocols, protocol, capabilities};
 * `subscribe` -> the snapshot, then `changes` notifications; `ping`; one method per action.
 * serve -> client notifications: `changes` {seq, ...} and `progress` {call, progress} (the live
 * steps of the call whose request id is `call`).
 */

/** The protocol versions this build speaks, newest first. */
export const PROTOCOLS = [1] as const;
export const PROTOCOL = PROTOCOLS[0];

/**
 * What a serve can do, as the hello lists them. A list (not a version) so a capability can come
 * and go alone: a client disables only the actions the remote lacks.
 */
export const CAPABILITIES = ['snapshot', 'resume', 'stop', 'purge', 'trash', 'restore', 'adopt', 'park', 'fix'] as const;
export type Capability = (typeof CAPABILITIES)[number] | (string & {});

/** The action each method needs; the serve refuses a method whose capability it lacks. */
export const METHOD_CAPABILITY: Readonly<Record<string, Capability>> = {
	resume: 'resume',
	stop: 'stop',
	'purge.plan': 'purge',
	'purge.confirm': 'purge',
	'trash.list': 'trash',
	'trash.empty': 'trash',
	restore: 'restore',
	adopt: 'adopt',
	park: 'park',
	wake: 'park',
	'drift.fix': 'fix',
};

export interface Hello {
	readonly program: 'mam-tui';
	readonly version: string;
	/** Every protocol the serve speaks. */
	readonly protocols: readonly number[];
	/** The one both sides speak (the newest), or null: the client then says which it needs. */
	readonly protocol: number | null;
	readonly capabilities: readonly Capability[];
}

/** JSON-RPC error codes: the standard ones and ours (-32000 ...). */
export const RPC_ERROR = {
	parse: -32700,
	invalidRequest: -32600,
	methodNotFound: -32601,
	invalidParams: -32602,
	internal: -32603,
	noProtocol: -32001,
	notSubscribed: -32002,
} as const;

export interface RpcRequest {
	readonly jsonrpc: '2.0';
	readonly id?: number | string;
	readonly method: string;
	readonly params?: unknown;
}

export interface RpcResponse {
	readonly jsonrpc: '2.0';
	readonly id: number | string | null;
	readonly result?: unknown;
	readonly error?: {readonly code: number; readonly message: string; readonly data?: unknown};
}

/** A collection the snapshot carries, keyed so a change sends only the items that changed. */
export const COLLECTIONS = ['sessions', 'panes', 'findings', 'conversations', 'attention'] as const;
export type CollectionName = (typeof COLLECTIONS)[number];

/** What one host looks like: the same shapes `status --json` prints, plus findings and conversations. */
export interface HostView {
	readonly sessions: readonly Record<string, unknown>[];
	readonly panes: readonly Record<string, unknown>[];
	readonly findings: readonly Record<string, unknown>[];
	readonly conversations: readonly Record<string, unknown>[];
	readonly attention: readonly Record<string, unknown>[];
	readonly mux: {readonly kind: string | null; readonly ok: boolean; readonly message: string};
	readonly registry: string;
}

/** One collection's change: items added or replaced (whole), and the keys of those that left. */
export interface CollectionChange {
	readonly upsert: readonly Record<string, unknown>[];
	readonly remove: readonly string[];
}

/** The `changes` notification: only the collections that changed, and the mux when it did. */
export interface Changes {
	readonly seq: number;
	readonly collections: Partial<Record<CollectionName, CollectionChange>>;
	readonly mux?: HostView['mux'];
	/** When the serve saw this state (ms since the epoch, the remote's clock). */
	readonly at: number;
}

/** The key each collection's items are known by. */
export function itemKey(collection: CollectionName, item: Record<string, unknown>): string {
	switch (collection) {
		case 'sessions':
			return String(item['name']);
		case 'panes':
			return String(item['id']);
		case 'conversations':
			return `${String(item['agent'])}:${String(item['id'])}`;
		case 'attention':
			return `${String(item['session'] ?? '')}\u0000${String(item['paneId'])}`;
		case 'findings':
			return String(item['key'] ?? JSON.stringify(item));
	}
}

/** What changed from `before` to `after`, or undefined when nothing did. */
export function diffCollection(
	collection: CollectionName,
	before: readonly Record<string, unknown>[],
	after: readonly Record<string, unknown>[],
): CollectionChange | undefined {
	const old = new Map(before.map(item => [itemKey(collection, item), JSON.stringify(item)]));
	const upsert: Record<string, unknown>[] = [];
	const seen = new Set<string>();
	for (const item of after) {
		const key = itemKey(collection, item);
		seen.add(key);
		if (old.get(key) !== JSON.stringify(item)) upsert.push(item);
	}
	const remove = [...old.keys()].filter(key => !seen.has(key));
	return upsert.length === 0 && remove.length === 0 ? undefined : {upsert, remove};
}

/** Apply a change to a collection, keeping the order: replaced items in place, new ones at the end. */
export function applyChange(collection: CollectionName, items: readonly Record<string, unknown>[], change: CollectionChange): Record<string, unknown>[] {
	const removed = new Set(change.remove);
	const fresh = new Map(change.upsert.map(item => [itemKey(collection, item), item]));
	const out: Record<string, unknown>[] = [];
	for (const item of items) {
		const key = itemKey(collection, item);
		if (removed.has(key)) continue;
		const replaced = fresh.get(key);
		out.push(replaced ?? item);
		fresh.delete(key);
	}
	return [...out, ...fresh.values()];
}
