import {useRef} from 'react';
import {useInput} from 'ink';
import {useApp} from '../StoreContext.js';
import {routeInput} from './router.js';

export interface Viewport {
	readonly width: number;
	readonly height: number;
	readonly home: string;
}

/**
 * The dashboard's one key handler: the router sends each key to the handler of the mode the store
 * is in at that moment (STYLE 4.4: read at call time, never captured at render). One hook rather
 * than one per mode gated with `isActive` (STYLE 0.3): the keys of one chunk can cross modes
 * (`/api` opens the filter, then types into it), and only one handler can follow the switch.
 */
export function useKeyRouter(viewport: Viewport): void {
	const {store, actions, keymap} = useApp();
	const latest = useRef(viewport);
	latest.current = viewport;
	useInput((input, key) => routeInput(input, key, {store, actions, keymap, viewport: () => latest.current}));
}
