import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from 'vitest';
import {readAgentRecord} from '../../../src/adapters/status/records.js';
import type {ProcessRef} from '../../../src/domain/types.js';
import {fixtureContext, makeTempLayout, type TempLayout} from '../fixtures/world.js';

let layouts: TempLayout[] = [];
afterEach(() => {
	for (const l of layouts) l.cleanup();
	layouts = [];
});

function layout(): TempLayout {
	const l = makeTempLayout('status');
	layouts.push(l);
	return l;
}

const claude: ProcessRef = {pid: 2802, ppid: 1, startTime: 283751, name: 'claude', argv: ['claude']};
const shell: ProcessRef = {pid: 2768, ppid: 1, startTime: 283700, name: 'bash', argv: ['bash']};

function writeRecord(root: string, name: string, body: Record<string, unknown>): void {
	fs.mkdirSync(path.join(root, 'sessions'), {recursive: true});
	fs.writeFileSync(path.join(root, 'sessions', name), JSON.stringify(body));
}

const blocked = {pid: 2802, sessionId: '0f112f91-0680-4a9a-beb3-605d1fdc2282', procStart: '283751', status: 'waiting', waitingFor: 'permission prompt'};

describe("claude's live record as status evidence", () => {
	it('is read for the claude process of the tree when pid and procStart match', () => {
		const l = layout();
		writeRecord(path.join(l.home, '.claude'), '2802.json', blocked);
		expect(readAgentRecord('claude', fixtureContext(l), [shell, claude])).toEqual({
			file: 'sessions/2802.json',
			status: 'waiting',
			waitingFor: 'permission prompt',
		});
	});

	it('is ignored when procStart names another process that had the pid, or is missing', () => {
		const l = layout();
		writeRecord(path.join(l.home, '.claude'), '2802.json', {...blocked, procStart: '111'});
		expect(readAgentRecord('claude', fixtureContext(l), [claude])).toBeUndefined();
		writeRecord(path.join(l.home, '.claude'), '2802.json', {...blocked, procStart: undefined});
		expect(readAgentRecord('claude', fixtureContext(l), [claude])).toBeUndefined();
	});

	it('skips the legacy pid-<n>.json name', () => {
		const l = layout();
		writeRecord(path.join(l.home, '.claude'), 'pid-2802.json', blocked);
		expect(readAgentRecord('claude', fixtureContext(l), [claude])).toBeUndefined();
	});

	it('follows CLAUDE_CONFIG_DIR for the own home', () => {
		const l = layout();
		const config = path.join(l.base, 'elsewhere');
		writeRecord(config, '2802.json', {...blocked, status: 'busy'});
		const ctx = fixtureContext(l, {ownHome: true, env: {CLAUDE_CONFIG_DIR: config}});
		expect(readAgentRecord('claude', ctx, [claude])?.status).toBe('busy');
		expect(readAgentRecord('claude', fixtureContext(l), [claude])).toBeUndefined();
	});

	it('is never read for other agents', () => {
		const l = layout();
		writeRecord(path.join(l.home, '.claude'), '2802.json', blocked);
		expect(readAgentRecord('codex', fixtureContext(l), [claude])).toBeUndefined();
	});
});
