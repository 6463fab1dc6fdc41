import type {render} from 'ink-testing-library';

export type Rendered = ReturnType<typeof render>;

/** Key bytes as a terminal sends them. */
export const KEYS = {
	up: '\u001B[A',
	down: '\u001B[B',
	enter: '\r',
	escape: '\u001B',
	tab: '\t',
	backspace: '\u007F',
	ctrlC: '\u0003',
} as const;

/** Let Ink parse the write, commit the render and re-attach handlers (STYLE.md 4.4). */
const settle = () => new Promise<void>(resolve => setImmediate(() => setTimeout(resolve, 0)));

/** Type keys one at a time, settling after each, and return the last frame. */
export async function press(r: Rendered, ...keys: string[]): Promise<string> {
	for (const key of keys) {
		r.stdin.write(key);
		await settle();
		await settle();
	}
	return r.lastFrame() ?? '';
}

/** Poll until the frame satisfies `ok`; throws with the last frame when it never does. */
export async function waitForFrame(r: Rendered, ok: (frame: string) => boolean, timeoutMs = 2000): Promise<string> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const frame = r.lastFrame() ?? '';
		if (frame && ok(frame)) return frame;
		if (Date.now() > deadline) throw new Error(`frame never matched; last frame:\n${frame}`);
		await settle();
	}
}
