/**
 * The dashboard pins a running row once its own pane names its conversation: a session started
 * with `n` (or a pane adopted before its agent wrote) is pinned as soon as the agent writes, as
 * `new` promises, without a trip to the findings view. Only an `unpinned` finding whose pin is
 * named by the row's pane (the mux's report, or the agent process's own evidence: the evidence
 * "In use" trusts) is applied; the only conversation of a folder since the row started stays a
 * finding for the user to confirm with `f`. The fix is the one `f` applies: compare-and-set on
 * the row's version, audited.
 */
import type {FixOutcome} from '../actions/driftFix.js';
import {messageOf} from '../domain/result.js';
import type {Finding, Fix} from '../domain/types.js';
import type {AppState} from '../store/state.js';

export interface AutoPinDeps {
	readonly getState: () => Pick<AppState, 'findings'>;
	readonly subscribe: (listener: () => void) => () => void;
	/** The fix `f` applies (actions/driftFix.ts applyFix on the dashboard's registry). */
	readonly apply: (finding: Finding) => FixOutcome | undefined;
	/** Shows one line to the user. */
	readonly notify: (level: 'ok' | 'error', text: string) => void;
	/** A refresh after a pin: the row's resume state and findings follow. */
	readonly refresh: () => void;
}

type PinFix = Extract<Fix, {type: 'pin'}>;

/** A finding the dashboard pins itself, with its pin. */
interface NamedPin {
	readonly finding: Finding;
	readonly fix: PinFix;
}

/** The findings the dashboard pins itself: a running row's pin named by its own pane. */
export function namedPins(findings: readonly Finding[]): NamedPin[] {
	return findings.flatMap(finding => {
		const fix = finding.fix;
		// Another machine's finding is that machine's to fix: never this registry's.
		return finding.host === undefined && finding.kind === 'unpinned' && fix?.type === 'pin' && fix.named !== undefined ? [{finding, fix}] : [];
	});
}

/** What a pin would write, so a refused one is not tried again on every refresh. */
function attemptKey({finding, fix}: NamedPin): string {
	return `${fix.sessionId}\0${fix.agentSessionId}\0${finding.sessionVersion ?? ''}`;
}

/** `pinned api to 0195…`, with what named it. */
function pinnedText({finding, fix}: NamedPin): string {
	const by = fix.named === 'mux' ? 'its pane reports it' : "its agent process's own evidence";
	return `pinned ${finding.sessionName ?? `session ${fix.sessionId}`} to ${fix.agentSessionId} (${by})`;
}

/** Follow the store's findings; returns the stop. */
export function startAutoPin(deps: AutoPinDeps): () => void {
	const tried = new Set<string>();
	let last: readonly Finding[] | undefined;
	const onChange = () => {
		const {findings} = deps.getState();
		if (findings === last) return;
		last = findings;
		let pinned = false;
		for (const pin of namedPins(findings)) {
			const key = attemptKey(pin);
			if (tried.has(key)) continue;
			tried.add(key);
			let outcome: FixOutcome | undefined;
			try {
				outcome = deps.apply(pin.finding);
			} catch (error) {
				// The registry failing here (locked, closed at quit) must not take the dashboard down.
				deps.notify('error', `auto-pin: ${messageOf(error)}`);
				continue;
			}
			if (!outcome) continue;
			if (outcome.status === 'applied') pinned = true;
			deps.notify(outcome.status === 'applied' ? 'ok' : 'error', outcome.status === 'applied' ? pinnedText(pin) : `auto-pin: ${outcome.message}`);
		}
		if (pinned) deps.refresh();
	};
	const unsubscribe = deps.subscribe(onChange);
	onChange();
	return unsubscribe;
}
