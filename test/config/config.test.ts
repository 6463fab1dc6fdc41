import {describe, expect, it} from 'vitest';
import {ConfigError, DEFAULT_CONFIG, parseConfig} from '../../src/config/config.js';

const FILE = '/home/u/.config/mam/config.yaml';

describe('config', () => {
	it('an empty file means the defaults', () => {
		expect(parseConfig(null, FILE)).toEqual(DEFAULT_CONFIG);
	});

	it('reads per-agent overrides, stop timeouts and refresh intervals', () => {
		const config = parseConfig({agents: {codex: {exitInput: '/exit', extraArgs: ['-m', 'o3']}}, stop: {graceSeconds: 4}, refresh: {pollMs: 500}}, FILE);
		expect(config.agents.codex).toEqual({exitInput: '/exit', extraArgs: ['-m', 'o3']});
		expect(config.stop).toEqual({graceSeconds: 4, killWaitSeconds: 3});
		expect(config.refresh.pollMs).toBe(500);
	});

	it('notify: bell by default; desktop and off on request', () => {
		expect(DEFAULT_CONFIG.notify).toBe('bell');
		expect(parseConfig({notify: 'desktop'}, FILE).notify).toBe('desktop');
		expect(parseConfig({notify: 'off'}, FILE).notify).toBe('off');
	});

	it('tmux.control: on by default, off on request', () => {
		expect(DEFAULT_CONFIG.tmux.control).toBe(true);
		expect(parseConfig({tmux: {control: false}}, FILE).tmux).toEqual({control: false});
		expect(parseConfig({tmux: {}}, FILE).tmux).toEqual({control: true});
	});

	it.each([
		[{notify: 'loud'}, 'notify must be one of bell, desktop, off'],
		[{stop: {graceSeconds: 0}}, 'stop.graceSeconds'],
		[{stop: {graceSeconds: 'ten'}}, 'stop.graceSeconds'],
		[{refresh: {pollMs: -1}}, 'refresh.pollMs'],
		[{agents: {cursor: {}}}, 'agents.cursor'],
		[{agents: {claude: {exitInput: '/exit\nrm -rf ~'}}}, 'agents.claude.exitInput'],
		[{agents: {claude: {extraArgs: 'x'}}}, 'agents.claude.extraArgs'],
		[{colour: true}, 'unknown key colour'],
		[{stop: {grace: 3}}, 'unknown key stop.grace'],
		[{tmux: {control: 'no'}}, 'tmux.control must be true or false'],
		[{tmux: {ctl: true}}, 'unknown key tmux.ctl'],
		[{tmux: 'off'}, 'tmux must be a mapping'],
		[['a'], 'top level'],
	])('rejects %j naming the key and the file', (raw, key) => {
		expect(() => parseConfig(raw, FILE)).toThrow(ConfigError);
		expect(() => parseConfig(raw, FILE)).toThrow(key);
		expect(() => parseConfig(raw, FILE)).toThrow(FILE);
	});
});
