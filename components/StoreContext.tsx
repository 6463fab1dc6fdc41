import React, {createContext, useContext, useRef, useSyncExternalStore} from 'react';
import type {UiActions} from '../src/store/uiActions.js';
import {DEFAULT_KEYMAP, type Keymap} from './input/keymap.js';
import type {Action} from '../src/store/reducer.js';
import type {AppState} from '../src/store/state.js';
import type {Store} from '../src/store/store.js';

export type {ConversationRef, UiActions} from '../src/store/uiActions.js';

export interface AppContextValue {
	readonly store: Store<AppState, Action>;
	readonly actions: UiActions;
	/** The effective keys (config.yaml's `keys:` applied). */
	readonly keymap: Keymap;
}

const AppContext = createContext<AppContextValue | null>(null);

export interface AppProviderProps {
	readonly store: Store<AppState, Action>;
	readonly actions: UiActions;
	/** @default DEFAULT_KEYMAP */
	readonly keymap?: Keymap;
	readonly children: React.ReactNode;
}

export function AppProvider({store, actions, keymap = DEFAULT_KEYMAP, children}: AppProviderProps): React.JSX.Element {
	return <AppContext.Provider value={{store, actions, keymap}}>{children}</AppContext.Provider>;
}

export function useApp(): AppContextValue {
	const value = useContext(AppContext);
	if (!value) throw new Error('useApp must be used inside <AppProvider>');
	return value;
}

/** The whole state; React re-renders only when the store hands out a new object. */
export function useAppState(): AppState {
	const {store} = useApp();
	return useSyncExternalStore(store.subscribe, store.getState, store.getState);
}

/** Same top-level fields, each the same by identity (for selectors that return a small record). */
export function shallowEqual<T extends object>(a: T, b: T): boolean {
	if (a === b) return true;
	const keys = Object.keys(a) as (keyof T)[];
	if (keys.length !== Object.keys(b).length) return false;
	return keys.every(key => Object.is(a[key], b[key]));
}

/**
 * One slice of the state. The component re-renders only when `isEqual` says the slice changed,
 * so a store change the screen does not show (a refresh that touched only conversations while
 * the sessions list is up) costs no React render and no Ink frame. A frame costs milliseconds
 * (Ink lays out and re-serialises the whole screen), and Ink throttles frames to 30 fps: a stray
 * frame just before a keystroke would hold the keystroke's frame back by up to 33 ms.
 *
 * `selector` must be pure. It is called again when the state or the selector changes; while
 * `isEqual` holds, the previous value (same identity) is returned, as useSyncExternalStore needs.
 */
export function useStoreSelector<T>(selector: (state: AppState) => T, isEqual: (a: T, b: T) => boolean = Object.is): T {
	const {store} = useApp();
	const last = useRef<{readonly state: AppState; readonly selector: (state: AppState) => T; readonly value: T} | null>(null);
	const getSnapshot = (): T => {
		const state = store.getState();
		const previous = last.current;
		if (previous && previous.state === state && previous.selector === selector) return previous.value;
		const next = selector(state);
		const value = previous && isEqual(previous.value, next) ? previous.value : next;
		last.current = {state, selector, value};
		return value;
	};
	return useSyncExternalStore(store.subscribe, getSnapshot, getSnapshot);
}
