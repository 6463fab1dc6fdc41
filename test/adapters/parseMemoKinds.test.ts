import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {ADAPTERS} from '../../src/adapters/index.js';
import {createRefresh, ParseCache} from '../../src/adapters/common/refresh.js';
import type {AdapterContext} from '../../src/adapters/types.js';
import type {AgentId} from '../../src/domain/types.js';
import {decodeValue, encodeValue} from '../../src/system/memoValue.js';
import {ParseMemo, parseMemoPath} from '../../src/system/parseMemo.js';
import {FIXTURE_BUILDERS} from './fixtures/index.js';
import type {FixtureWorld} from './fixtures/types.js';

/**
 * Every parse kind kept on disk (`persistedParseKind` in src/) against each agent's fixture in
 * its real format: its real values survive the memo's encoding exactly (no Map, Set, Date or
 * undefined-versus-missing surprise), and a restarted process answers discovery, verify and
 * artifacts from the memo exactly as a fresh parse does.
 */

const SRC = path.resolve(import.meta.dirname, '..', '..', 'src');

/** The persisted kinds the source declares: `persistedParseKind<…>('name', version)`. */
function declaredKinds(): string[] {
	const out: string[] = [];
	const walk = (dir: string) => {
		for (const e of fs.readdirSync(dir, {withFileTypes: true})) {
			const p = path.join(dir, e.name);
			if (e.isDirectory()) walk(p);
			else if (/\.tsx?$/.test(e.name))
				for (const m of fs.readFileSync(p, 'utf8').matchAll(/persistedParseKind<[^;]*?>\('([^']+)', \d+\)/g)) out.push(m[1] ?? '');
		}
	};
	walk(SRC);
	return out.sort();
}

const AGENTS: readonly AgentId[] = ['claude', 'codex', 'gemini', 'agy', 'grok'];

let cleanups: (() => void)[] = [];
afterEach(() => {
	for (const c of cleanups.reverse()) c();
	cleanups = [];
});

/**
 * What one process answers: discovery (children too) in one refresh, then verify, artifacts and in-use
 * of every session each in a refresh of its own (as an action asks; the lookups then differ from a
 * whole-store pass), an error's message where the id is not one the adapter takes.
 */
async function answers(fx: FixtureWorld, parses: ParseCache): Promise<unknown[]> {
	const adapter = ADAPTERS[fx.agent];
	const inRefresh = (): AdapterContext => ({...fx.ctx, parses, refresh: createRefresh({parses})});
	const settle = async (ask: () => Promise<unknown>) => ask().catch((error: unknown) => String(error));
	const out: unknown[] = [await adapter.discover(inRefresh(), {includeChildren: true})];
	for (const s of fx.sessions) {
		out.push(await settle(() => adapter.verify(inRefresh(), s.id)));
		out.push(await settle(() => adapter.artifacts(inRefresh(), s.id)));
		out.push(await settle(() => adapter.inUse(inRefresh(), s.id)));
	}
	return out;
}

describe('persisted parse kinds', () => {
	const seen = new Map<string, number>();

	it.each(AGENTS)('%s: values round-trip exactly, and a restart answers from the memo as a fresh parse does', async agent => {
		const fx = await FIXTURE_BUILDERS[agent]();
		cleanups.push(() => fx.cleanup());
		const state = fs.mkdtempSync(path.join(fx.ctx.tmpDir, 'memo-state-'));
		const memoOf = () => new ParseMemo(parseMemoPath(state), {appVersion: 'test', flushDelayMs: 60_000});
		const first = new ParseCache(memoOf());
		const fresh = await answers(fx, first);
		for (const kind of declaredKinds()) {
			for (const [file, parsed] of first.parsed.of(kind)) {
				const text = encodeValue(parsed.value);
				expect(text, `${kind} ${file}`).toBeDefined();
				expect(decodeValue(text ?? ''), `${kind} ${file}`).toStrictEqual({ok: true, value: parsed.value});
				seen.set(kind, (seen.get(kind) ?? 0) + 1);
			}
		}
		first.close();

		const restarted = new ParseCache(memoOf());
		cleanups.push(() => restarted.close());
		expect(await answers(fx, restarted)).toStrictEqual(fresh);
		expect(restarted.memo?.hits).toBeGreaterThan(0);
	});

	it('every persisted kind was checked on real values above', () => {
		expect(declaredKinds().length).toBeGreaterThan(0);
		expect([...seen.keys()].sort()).toEqual(declaredKinds());
	});
});
