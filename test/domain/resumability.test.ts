import {describe, expect, it} from 'vitest';
import {NOBODY, resumability, type ResumeFacts, type ResumeVerdict} from '../../src/domain/resumability.js';

const ID = '11111111-1111-4111-8111-111111111111';
const holder = {pid: 77, command: 'claude --resume x', reason: 'argv names the id'};
/** Everything known and fine: resumable. */
const fine: ResumeFacts = {pin: ID, cwd: '/w/api', cwdPresent: true, onDisk: {kind: 'yes'}, use: NOBODY};

/** SPEC 6.1 in the order a user wants to hear it; each row changes one fact of `fine` (or more, to show which wins). */
const TABLE: ReadonlyArray<[string, Partial<ResumeFacts>, ResumeVerdict]> = [
	['pinned, on disk, folder there, unused: yes', {}, {state: {kind: 'yes'}}],
	['purged wins over everything', {purged: true, pin: null, cwdPresent: false}, {state: {kind: 'no', reason: 'purged'}, block: 'purged'}],
	['nothing pinned yet', {pin: null}, {state: {kind: 'no', reason: 'no conversation pinned yet'}, block: 'unpinned'}],
	['live in its own pane', {livePane: '%3', use: {ok: true, holders: [holder]}}, {state: {kind: 'no', reason: 'live in pane %3'}, block: 'live'}],
	[
		'live in another session',
		{liveElsewhere: {session: 'web', pane: '%4'}},
		{state: {kind: 'no', reason: 'live in session web (pane %4)'}, block: 'live-elsewhere'},
	],
	// The folder comes before the adapter's verdict: resume runs only there, whatever the disk says.
	[
		'folder gone, whatever the disk says',
		{cwdPresent: false, onDisk: {kind: 'no', reason: 'no transcript'}},
		{state: {kind: 'no', reason: 'its folder /w/api no longer exists'}, block: 'cwd-missing'},
	],
	['the adapter says no', {onDisk: {kind: 'no', reason: 'holds no message'}}, {state: {kind: 'no', reason: 'holds no message'}, block: 'not-on-disk'}],
	[
		'the adapter cannot tell',
		{onDisk: {kind: 'unknown', reason: 'database is locked'}},
		{state: {kind: 'unknown', reason: 'database is locked'}, block: 'not-on-disk'},
	],
	[
		'somebody uses it',
		{use: {ok: true, holders: [holder, holder]}},
		{state: {kind: 'no', reason: 'in use by pid 77 (claude --resume x: argv names the id) and 1 more'}, block: 'in-use'},
	],
	['who uses it is unknown', {use: {ok: false, error: 'cannot read /proc'}}, {state: {kind: 'unknown', reason: 'cannot read /proc'}, block: 'use-unknown'}],
	['folder not checked yet', {cwdPresent: undefined, onDisk: undefined}, {state: {kind: 'unknown', reason: 'folder not checked yet'}, missing: 'cwdPresent'}],
	['disk not checked yet', {onDisk: undefined, use: undefined}, {state: {kind: 'unknown', reason: 'not checked yet'}, missing: 'onDisk'}],
	['use not checked yet', {use: undefined}, {state: {kind: 'unknown', reason: 'use not checked yet'}, missing: 'use'}],
];

describe('resumability: the one SPEC 6.1 rule', () => {
	it.each(TABLE)('%s', (_what, change, verdict) => {
		expect(resumability({...fine, ...change})).toEqual(verdict);
	});
});
