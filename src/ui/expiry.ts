import type {Action} from '../store/reducer.js';
import {NOTICE_TTL_MS, type AppState} from '../store/state.js';
import type {Store} from '../store/store.js';

/** The soonest moment a notice or an operation that ended well runs out; undefined if none will. */
export function nextExpiry(state: AppState): number | undefined {
	const times = [
		...state.notices.filter(n => n.level !== 'error').map(n => n.at + NOTICE_TTL_MS),
		...Object.values(state.operations)
			.filter(op => op.endedAt !== undefined && op.outcome?.ok !== false)
			.map(op => (op.endedAt ?? 0) + NOTICE_TTL_MS),
	];
	return times.length > 0 ? Math.min(...times) : undefined;
}

/**
 * Make notices and finished operations go away on time: one timer, set for the soonest expiry,
 * dispatches `clock/expire` (the reducer decides what goes; errors stay until dismissed).
 * Returns the stop function.
 */
export function startExpiry(store: Store<AppState, Action>, now: () => number): () => void {
	let timer: NodeJS.Timeout | undefined;
	let armedFor: number | undefined;
	const arm = () => {
		const at = nextExpiry(store.getState());
		if (at === armedFor) return;
		clearTimeout(timer);
		armedFor = at;
		if (at === undefined) return;
		timer = setTimeout(
			() => {
				armedFor = undefined;
				store.dispatch({type: 'clock/expire', now: now()});
				arm();
			},
			Math.max(0, at - now()),
		);
		timer.unref();
	};
	const unsubscribe = store.subscribe(arm);
	arm();
	return () => {
		unsubscribe();
		clearTimeout(timer);
	};
}
