import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {describe, expect, it} from 'vitest';
import {readHermesScreen} from '../../../src/adapters/hermes/screen.js';
import {detectStatus} from '../../../src/adapters/status/index.js';

// hermes 0.19.0 puts an icon in front of its prompt for each state that has the keyboard
// (cli.py `_get_tui_prompt_fragments`). The real captures hold the idle, working and approval
// rows; the other states are those captures with the composer row as hermes draws it then.

const SCREENS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'screens', 'hermes');
const idle = fs.readFileSync(path.join(SCREENS, 'idle-after-turn.txt'), 'utf8');

/** The real idle screen with its composer row (`❯`) replaced. */
function withComposer(row: string): string {
	const replaced = idle.replace(/^\u276f$/m, row);
	expect(replaced).not.toBe(idle);
	return replaced;
}

describe('hermes composer states', () => {
	it.each([
		['? \u276f', 'a clarify question'],
		['\u270e \u276f type your answer here and press Enter', 'a clarify answer being typed'],
		['\u{1f510} \u276f', 'a sudo password'],
		['\u{1f511} \u276f', 'a secret'],
		['\u26a0 \u276f type 1/2/3, or use \u2191/\u2193 then Enter', 'a slash-command confirmation'],
	])('%s (%s) has the keyboard: stop types nothing, status says blocked', row => {
		const screen = withComposer(row);
		expect(readHermesScreen(screen).kind).toBe('blocked');
		expect(detectStatus('hermes', {screen}).status).toBe('blocked');
	});

	it('a profile name before the prompt is idle, and what follows it a draft', () => {
		expect(readHermesScreen(withComposer('coder \u276f'))).toEqual({kind: 'empty'});
		expect(readHermesScreen(withComposer('coder \u276f fix the parser'))).toEqual({kind: 'draft', lines: 1});
		expect(detectStatus('hermes', {screen: withComposer('coder \u276f')}).status).toBe('idle');
	});

	it('a slow slash command (a spinner before the prompt) is not a composer to type into', () => {
		expect(readHermesScreen(withComposer('\u280b \u276f \u280b Processing command...')).kind).toBe('unknown');
	});

	it('text typed while a turn runs is a draft, the placeholder is not', () => {
		const working = fs.readFileSync(path.join(SCREENS, 'working-1.txt'), 'utf8');
		expect(readHermesScreen(working)).toEqual({kind: 'empty'});
		expect(readHermesScreen(working.replace(/msg=interrupt \u00b7 .*$/m, 'and also this'))).toEqual({kind: 'draft', lines: 1});
	});
});
