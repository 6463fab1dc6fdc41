import {describe, expect, it} from 'vitest';
import {DEFAULT_KEYMAP as BINDINGS, resolveCommand} from '../../components/input/keymap.js';

describe('keymap', () => {
	it('resolves vim keys and arrows to the same commands', () => {
		expect(resolveCommand('sessions', 'j', {})).toBe('cursor.down');
		expect(resolveCommand('sessions', '', {downArrow: true})).toBe('cursor.down');
		expect(resolveCommand('sessions', 'k', {})).toBe('cursor.up');
		expect(resolveCommand('findings', '', {upArrow: true})).toBe('cursor.up');
		expect(resolveCommand('sessions', 'c', {ctrl: true})).toBe('app.quit');
		expect(resolveCommand('sessions', 'c', {})).not.toBe('app.quit');
	});

	it('binds nothing in filter mode: typing is text', () => {
		expect(resolveCommand('filter', 'q', {})).toBeUndefined();
		expect(resolveCommand('filter', 'j', {})).toBeUndefined();
	});

	it('never binds ctrl+b (the herdr and tmux prefix)', () => {
		for (const binding of BINDINGS) {
			expect(binding.chords.some(c => c.ctrl && c.input === 'b')).toBe(false);
		}
		expect(resolveCommand('sessions', 'b', {ctrl: true})).toBeUndefined();
	});

	it('no two commands share a chord within a mode', () => {
		const seen = new Map<string, string>();
		for (const binding of BINDINGS) {
			for (const mode of binding.modes) {
				for (const chord of binding.chords) {
					const id = `${mode}:${chord.key ?? ''}:${chord.input ?? ''}:${chord.ctrl ? 'C' : ''}`;
					expect(seen.get(id), id).toBeUndefined();
					seen.set(id, binding.command);
				}
			}
		}
	});
});

describe('README keys table', () => {
	it('is the table generated from the keymap', async () => {
		const fs = await import('node:fs');
		const {keysMarkdown} = await import('../../components/input/keymap.js');
		const readme = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
		expect(readme).toContain(keysMarkdown());
	});
});
