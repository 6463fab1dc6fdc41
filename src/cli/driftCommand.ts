import {describeFix} from '../domain/fixText.js';
import {EXIT} from '../domain/exitCodes.js';
import {messageOf} from '../domain/result.js';
import type {Finding, Fix, MuxKind} from '../domain/types.js';
import {detectDrift, driftNotes} from '../drift/detect.js';
import {fixDrift, type FixOutcome} from '../actions/driftFix.js';
import type {DriftInput} from '../drift/input.js';
import {selectMuxFor} from '../mux/select.js';
import type {Multiplexer} from '../mux/types.js';
import {collectDriftInput} from '../sync/pipeline.js';
import type {Command} from './commands.js';
import {out, outJson} from './output.js';
import type {World} from '../world/world.js';

/**
 * The stable shape of `mam-tui drift --json`. `version` changes only when a field is removed or
 * changes meaning; new fields may appear.
 */
export interface DriftJson {
	readonly version: 1;
	readonly mux: {readonly kind: MuxKind | null; readonly reachable: boolean; readonly problem?: string};
	/** What could not be checked this run. */
	readonly notes: readonly string[];
	readonly findings: readonly Finding[];
	/** With `--fix`: each fix tried, in order. */
	readonly applied?: ReadonlyArray<{readonly status: FixOutcome['status']; readonly session: string | null; readonly fix: Fix; readonly message: string}>;
}

/** The multiplexer for this run, or why there is none. Injected so tests (and the mux helper's select) decide. */
export type OpenMux = (world: World) => Promise<{readonly mux: Multiplexer | null; readonly problem?: string}>;

function findingLines(finding: Finding): string[] {
	const who = finding.sessionName ?? (finding.paneId ? `pane ${finding.paneId}` : '');
	return [
		`${finding.level === 'info' ? 'i' : '!'} ${finding.kind} ${who}: ${finding.message}`,
		...(finding.fix ? [`    fix: ${describeFix(finding.fix)}`] : []),
		...(finding.offer ? [`    offer (not automatic): ${finding.offer}`] : []),
		...(finding.candidates && !finding.fix ? [`    candidates: ${finding.candidates.join(', ')}`] : []),
		...finding.evidence.map(line => `    seen: ${line}`),
	];
}

function outcomeLine(outcome: FixOutcome): string {
	const verb = outcome.status === 'applied' ? 'fixed' : outcome.status;
	return `${verb} ${outcome.finding.kind}: ${outcome.message}`;
}

/** Exit 1 while anything but information remains. */
function exitFor(findings: readonly Finding[]): 0 | 1 {
	return findings.some(f => f.level !== 'info') ? EXIT.failed : EXIT.ok;
}

function report(world: World, input: DriftInput, findings: readonly Finding[], outcomes?: readonly FixOutcome[]): void {
	const notes = driftNotes(input);
	if (world.options.json) {
		const body: DriftJson = {
			version: 1,
			mux: {kind: input.mux, reachable: input.panes !== null, ...(input.muxProblem ? {problem: input.muxProblem} : {})},
			notes,
			findings,
			...(outcomes ? {applied: outcomes.map(o => ({status: o.status, session: o.sessionName ?? null, fix: o.fix, message: o.message}))} : {}),
		};
		outJson(body);
		return;
	}
	const lines = [
		...notes.map(n => `note: ${n}`),
		...(outcomes ?? []).map(outcomeLine),
		...(outcomes && outcomes.length === 0 ? ['nothing to fix automatically'] : []),
		...(findings.length === 0 ? ['No drift: the registry matches the panes and the disk.'] : findings.flatMap(findingLines)),
	];
	const fixable = findings.filter(f => f.fix).length;
	if (!outcomes && fixable > 0) lines.push(`${fixable} finding(s) have a safe fix: run \`mam-tui drift --fix\`.`);
	out(lines.join('\n'));
}

/** `mam-tui drift [--json] [--fix]` over an injected multiplexer. */
export function createDriftCommand(openMux: OpenMux): Command {
	return {
		name: 'drift',
		summary: 'where the registry and reality disagree; --fix applies the safe fixes',
		usage: 'mam-tui drift [--json] [--fix]',
		options: {fix: {type: 'boolean'}},
		async run(world, values) {
			const {mux, problem} = await openMux(world);
			try {
				const sources = {
					registry: world.registry(),
					mux,
					...(problem ? {muxProblem: problem} : {}),
					ctx: world.adapterContext(),
				};
				if (values['fix'] === true) {
					const run = await fixDrift(sources.registry, () => collectDriftInput(sources), {now: world.now});
					report(world, run.input, run.findings, run.outcomes);
					return exitFor(run.findings);
				}
				const input = await collectDriftInput(sources);
				const findings = detectDrift(input);
				report(world, input, findings);
				return exitFor(findings);
			} finally {
				await mux?.dispose().catch((error: unknown) => world.logger.warn('mux dispose failed', messageOf(error)));
			}
		},
	};
}

/** `--mux herdr|tmux|auto`; a backend that cannot be built leaves the panes unchecked, with the reason. */
const selectedMux: OpenMux = async world => {
	try {
		return {mux: await selectMuxFor(world)};
	} catch (error) {
		return {mux: null, problem: messageOf(error)};
	}
};

export const driftCommand = createDriftCommand(selectedMux);
