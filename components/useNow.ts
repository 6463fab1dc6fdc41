import {useEffect, useReducer, useRef, useState} from 'react';
import {nextAgesChange} from './format.js';

/**
 * The current time, re-read every `intervalMs` while `active` (spinners, elapsed times). Inactive,
 * it does not tick at all: what an idle screen shows of the time is ages, and `useAgeClock`
 * redraws those exactly when one changes.
 */
export function useNow(active: boolean, intervalMs = 100): number {
	const [now, setNow] = useState(() => Date.now());
	useEffect(() => {
		if (!active) return undefined;
		setNow(Date.now());
		const timer = setInterval(() => setNow(Date.now()), intervalMs);
		return () => clearInterval(timer);
	}, [active, intervalMs]);
	return now;
}

/** At most one redraw for ages per this long: rows made moments apart turn their ages moments apart. */
const AGE_REDRAW_GAP_MS = 60_000;

/**
 * The time the ages on screen are read at: the time of each render, and a render of its own when
 * the first of the ages of `items` (their times by `timeOf`) would change, at most one a minute (a list of
 * rows made over a few seconds turns its ages in one frame, not one per row). An idle list of
 * day-old rows then draws no frame for hours; a list with a minutes-old row, one a minute.
 */
export function useAgeClock<T>(items: readonly T[], timeOf: (item: T) => number): number {
	const [woken, wake] = useReducer((n: number) => n + 1, 0);
	const lastWake = useRef(Number.NEGATIVE_INFINITY);
	// The same list before its next change keeps its answer: a keystroke in a list of 20,000 does not walk it.
	const known = useRef<{items: readonly T[]; at: number | undefined} | undefined>(undefined);
	const now = Date.now();
	const kept = known.current;
	const at = kept && kept.items === items && (kept.at === undefined || kept.at > now) ? kept.at : nextAgesChange(items, timeOf, now);
	known.current = {items, at};
	useEffect(() => {
		if (at === undefined) return undefined;
		const wait = Math.max(at + 1, lastWake.current + AGE_REDRAW_GAP_MS) - Date.now();
		const timer = setTimeout(
			() => {
				lastWake.current = Date.now();
				wake();
			},
			Math.max(0, wait),
		);
		return () => clearTimeout(timer);
	}, [at, woken]);
	return now;
}
