/** The external store contract (STYLE.md 3.2): components read it with useSyncExternalStore. */
export interface Store<S, A> {
	getState(): S;
	subscribe(listener: () => void): () => void;
	dispatch(action: A): void;
}

export function createStore<S, A>(reducer: (state: S, action: A) => S, initial: S): Store<S, A> {
	let state = initial;
	const listeners = new Set<() => void>();
	return {
		getState: () => state,
		subscribe(listener) {
			listeners.add(listener);
			return () => {
				listeners.delete(listener);
			};
		},
		dispatch(action) {
			const next = reducer(state, action);
			// Unchanged state notifies nobody, so a no-op action costs no render.
			if (next === state) return;
			state = next;
			for (const listener of listeners) listener();
		},
	};
}
