import {vi, type Mock} from 'vitest';
import type {UiActions} from '../../src/store/uiActions.js';

export type FakeActions = {readonly [K in keyof UiActions]: Mock<UiActions[K]>};

/** Every UI action as a spy: tests assert what a key asked for. */
export function fakeActions(): FakeActions {
	return {
		quit: vi.fn<UiActions['quit']>(),
		refresh: vi.fn<UiActions['refresh']>(),
		focus: vi.fn<UiActions['focus']>(),
		resume: vi.fn<UiActions['resume']>(),
		openStop: vi.fn<UiActions['openStop']>(),
		stop: vi.fn<UiActions['stop']>(),
		park: vi.fn<UiActions['park']>(),
		wake: vi.fn<UiActions['wake']>(),
		openPurge: vi.fn<UiActions['openPurge']>(),
		confirmPurge: vi.fn<UiActions['confirmPurge']>(),
		applyFix: vi.fn<UiActions['applyFix']>(),
		newSession: vi.fn<UiActions['newSession']>(),
		adopt: vi.fn<UiActions['adopt']>(),
		resumeConversation: vi.fn<UiActions['resumeConversation']>(),
		openPurgeConversation: vi.fn<UiActions['openPurgeConversation']>(),
		loadAllConversations: vi.fn<UiActions['loadAllConversations']>(),
		undoPurge: vi.fn<UiActions['undoPurge']>(),
		loadTrash: vi.fn<UiActions['loadTrash']>(),
		restoreTrash: vi.fn<UiActions['restoreTrash']>(),
		emptyTrash: vi.fn<UiActions['emptyTrash']>(),
	};
}
