import fs from 'node:fs';
import net from 'node:net';

/**
 * A socket in front of a (fake) herdr that can make one pane id name another pane: after
 * `reuse(id, newcomer)`, every request for `id` reaches `newcomer`, every answer shows the newcomer
 * under `id`, and the pane that had `id` disappears from listings and events. From the client's
 * side that is a pane closed and a new pane given the same id between two calls — what a herdr
 * restart (or any backend that recycles ids) would do. Lines pass through as JSON, rewritten.
 */
export class HerdrIdProxy {
	readonly socketPath: string;
	private readonly upstream: string;
	private readonly alias = new Map<string, string>();
	private readonly hidden = new Set<string>();
	private server: net.Server | undefined;
	private readonly sockets = new Set<net.Socket>();
	/** Called after the answer to each request went back to the client (with the request's method). */
	afterAnswer: ((method: string) => void) | undefined;

	constructor(socketPath: string, upstream: string) {
		this.socketPath = socketPath;
		this.upstream = upstream;
	}

	async start(): Promise<void> {
		fs.rmSync(this.socketPath, {force: true});
		const server = net.createServer(client => this.accept(client));
		await new Promise<void>((resolve, reject) => {
			server.once('error', reject);
			server.listen(this.socketPath, () => resolve());
		});
		this.server = server;
	}

	async stop(): Promise<void> {
		for (const socket of this.sockets) socket.destroy();
		const server = this.server;
		this.server = undefined;
		if (server) await new Promise<void>(resolve => server.close(() => resolve()));
		fs.rmSync(this.socketPath, {force: true});
	}

	/** From now on `id` is `newcomer`; the pane that was `id` is gone from view. */
	reuse(id: string, newcomer: string): void {
		this.alias.set(id, newcomer);
		this.hidden.add(id);
	}

	/** Every id names its own pane again. */
	reset(): void {
		this.alias.clear();
		this.hidden.clear();
		this.afterAnswer = undefined;
	}

	private toReal(value: string): string {
		return this.alias.get(value) ?? value;
	}

	private toPublic(value: string): string {
		for (const [id, real] of this.alias) if (real === value) return id;
		return value;
	}

	/** A value with every pane id rewritten one way; in answers, the hidden pane's entries dropped. */
	private rewrite(value: unknown, direction: 'request' | 'answer'): unknown {
		if (typeof value === 'string') return direction === 'request' ? this.toReal(value) : this.toPublic(value);
		if (Array.isArray(value)) {
			const kept = direction === 'answer' ? value.filter(v => !this.isHiddenPane(v)) : value;
			return kept.map(v => this.rewrite(v, direction));
		}
		if (value && typeof value === 'object') {
			return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.rewrite(v, direction)]));
		}
		return value;
	}

	/** An entry about the pane that lost its id (checked before renaming, so on real ids). */
	private isHiddenPane(value: unknown): boolean {
		if (!value || typeof value !== 'object') return false;
		const id = (value as {pane_id?: unknown}).pane_id;
		return typeof id === 'string' && this.hidden.has(id);
	}

	private line(text: string, direction: 'request' | 'answer'): string | undefined {
		let parsed: unknown;
		try {
			parsed = JSON.parse(text);
		} catch {
			return text;
		}
		// An event about the pane that lost its id never reaches the client.
		if (direction === 'answer' && parsed && typeof parsed === 'object' && 'event' in parsed) {
			const data = (parsed as {data?: {pane_id?: unknown; pane?: {pane_id?: unknown}}}).data;
			const id = data?.pane_id ?? data?.pane?.pane_id;
			if (typeof id === 'string' && this.hidden.has(id)) return undefined;
		}
		return JSON.stringify(this.rewrite(parsed, direction));
	}

	private pipe(from: net.Socket, to: net.Socket, direction: 'request' | 'answer', onLine?: (text: string) => void): void {
		let buffer = '';
		from.setEncoding('utf8');
		from.on('data', (chunk: string) => {
			buffer += chunk;
			for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
				const out = this.line(buffer.slice(0, nl), direction);
				buffer = buffer.slice(nl + 1);
				if (out !== undefined && !to.destroyed) to.write(`${out}\n`, () => onLine?.(out));
			}
		});
		from.on('end', () => {
			if (buffer.length > 0 && !to.destroyed) to.write(buffer);
			to.end();
		});
		from.on('error', () => to.destroy());
		from.on('close', () => to.destroy());
	}

	private accept(client: net.Socket): void {
		const server = net.createConnection(this.upstream);
		for (const s of [client, server]) {
			this.sockets.add(s);
			s.on('close', () => this.sockets.delete(s));
			s.on('error', () => undefined);
		}
		let method = '';
		this.pipe(client, server, 'request', text => {
			method = (JSON.parse(text) as {method?: string}).method ?? '';
		});
		this.pipe(server, client, 'answer', () => this.afterAnswer?.(method));
	}
}
