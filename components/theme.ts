import type {SessionStatus} from '../src/domain/types.js';

/** Colours carry meaning only together with text, so the UI reads the same under NO_COLOR. */
export const STATUS_COLOR: Record<SessionStatus, string> = {
	running: 'green',
	stopped: 'yellow',
	purged: 'gray',
	parked: 'blue',
};

export const ACCENT = 'cyan';
