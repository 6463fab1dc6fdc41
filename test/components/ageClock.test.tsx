import {cleanup, render} from 'ink-testing-library';
import {afterEach, describe, expect, it, vi} from 'vitest';
import {App} from '../../components/App.js';
import {AppProvider} from '../../components/StoreContext.js';
import {age, nextAgeChange} from '../../components/format.js';
import {reducer} from '../../src/store/reducer.js';
import {initialState} from '../../src/store/state.js';
import {createStore} from '../../src/store/store.js';
import {fakeActions} from './fakeActions.js';
import {session} from './fixtures.js';

afterEach(() => {
	cleanup();
	vi.useRealTimers();
});

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('when an age next reads differently', () => {
	it('is the first moment its text changes, and not a moment before', () => {
		const from = 1_000_000;
		// ages from zero to a few days, at odd offsets around each unit's edges
		const offsets = [
			0,
			400,
			500,
			1500,
			59_400,
			59_600,
			61_000,
			30 * MINUTE + 7,
			HOUR - 501,
			HOUR - 499,
			HOUR + 1,
			5 * HOUR + 123,
			DAY - 600,
			DAY + 7,
			3 * DAY + 17,
		];
		for (const offset of offsets) {
			const now = from + offset;
			const at = nextAgeChange(from, now);
			expect(at, `offset ${offset}`).toBeGreaterThan(now);
			expect(age(from, at), `offset ${offset}`).not.toBe(age(from, now));
			// Seconds are one step: in the first minute the next change is to `1m`.
			if (offset >= 59_500) expect(age(from, at - 1), `offset ${offset}`).toBe(age(from, now));
		}
		expect(age(from, nextAgeChange(from, from + 1500))).toBe('1m');
	});
});

/** Advance the faked clock, then let React's scheduler (setImmediate, not faked) and Ink's throttle run. */
async function advance(ms: number): Promise<void> {
	await vi.advanceTimersByTimeAsync(ms);
	for (let i = 0; i < 3; i++) {
		await new Promise(resolve => setImmediate(resolve));
		await vi.advanceTimersByTimeAsync(50);
	}
}

describe('the dashboard clock', () => {
	it('draws no frame for an idle list of day-old rows, and redraws a minutes-old row when its age turns', async () => {
		vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date']});
		const start = Date.UTC(2026, 0, 10, 12, 0, 0);
		vi.setSystemTime(start);
		const store = createStore(
			reducer,
			initialState({sessions: [session({name: 'old-one', createdAt: start - 3 * DAY - 5 * MINUTE}), session({name: 'old-two', createdAt: start - 9 * DAY})]}),
		);
		const r = render(
			<AppProvider store={store} actions={fakeActions()}>
				<App home="/home/u" />
			</AppProvider>,
		);
		await advance(100);
		expect(r.lastFrame()).toMatch(/old-one.*3d/);
		const frames = r.frames.length;
		await advance(3 * HOUR);
		expect(r.frames.length).toBe(frames);
		// A row made 30 minutes ago: its age turns each minute, and the screen follows it.
		store.dispatch({
			type: 'registry/loaded',
			sessions: [...store.getState().sessions, session({name: 'young', createdAt: Date.now() - 30 * MINUTE - 10_000})],
			at: Date.now(),
		});
		await advance(100);
		expect(r.lastFrame()).toMatch(/young.*30m/);
		await advance(MINUTE);
		expect(r.lastFrame()).toMatch(/young.*31m/);
		const before = r.frames.length;
		await advance(10 * MINUTE);
		expect(r.lastFrame()).toMatch(/young.*41m/);
		// One frame per minute at most, not one per second.
		expect(r.frames.length - before).toBeLessThanOrEqual(10);
	});

	it('rows made moments apart turn their ages in one frame, not one per row', async () => {
		vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date']});
		const start = Date.UTC(2026, 0, 10, 12, 0, 0);
		vi.setSystemTime(start);
		// 40 rows made 200 ms apart twenty minutes ago, as a script (or the benchmark) makes them.
		const rows = Array.from({length: 40}, (_, i) => session({name: `row-${String(i).padStart(2, '0')}`, createdAt: start - 20 * MINUTE + 200 * i}));
		const store = createStore(reducer, initialState({sessions: rows}));
		const r = render(
			<AppProvider store={store} actions={fakeActions()}>
				<App home="/home/u" />
			</AppProvider>,
		);
		await advance(100);
		expect(r.lastFrame()).toMatch(/row-00.*20m/);
		const before = r.frames.length;
		// A second at a time, so each wake renders (React's scheduler is not faked) before the next is due.
		for (let s = 0; s < 300; s++) await advance(1000);
		expect(r.lastFrame()).toMatch(/row-00.*25m/);
		expect(r.frames.length - before).toBeLessThanOrEqual(6);
	});
});
