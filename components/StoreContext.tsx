import React, {createContext, useContext, useSyncExternalStore} from 'react';
import type {UiActions} from '../src/store/uiActions.js';
import type {Action} from '../src/store/reducer.js';
import type {AppState} from '../src/store/state.js';
import type {Store} from '../src/store/store.js';

export type {ConversationRef, UiActions} from '../src/store/uiActions.js';

export interface AppContextValue {
	readonly store: Store<AppState, Action>;
	readonly actions: UiActions;
}

const AppContext = createContext<AppContextValue | null>(null);

export interface AppProviderProps {
	readonly store: Store<AppState, Action>;
	readonly actions: UiActions;
	readonly children: React.ReactNode;
}

export function AppProvider({store, actions, children}: AppProviderProps): React.JSX.Element {
	return <AppContext.Provider value={{store, actions}}>{children}</AppContext.Provider>;
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
