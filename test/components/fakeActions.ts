import {vi} from 'vitest';
import type {UiActions} from '../../src/store/uiActions.js';

/** Every UI action as a spy: tests assert what a key asked for. */
export function fakeActions(): {[K in keyof UiActions]: ReturnType<typeof vi.fn>} & UiActions {
	return {
		quit: vi.fn(),
		refresh: vi.fn(),
		focus: vi.fn(),
		resume: vi.fn(),
		stop: vi.fn(),
		openPurge: vi.fn(),
		confirmPurge: vi.fn(),
		applyFix: vi.fn(),
		newSession: vi.fn(),
		adopt: vi.fn(),
		resumeConversation: vi.fn(),
		openPurgeConversation: vi.fn(),
	};
}
