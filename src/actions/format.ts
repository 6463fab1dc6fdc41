import type {PlanItem} from '../adapters/types.js';
import type {PurgePlanView, PurgeResult} from './purge.js';
import type {StopOutcome, StopProgress, StopStep} from './stop.js';

/** Step numbers as SPEC 6.2 counts them: 0 capture, then 1–3. */
export const STEP_NUMBER: Readonly<Record<StopStep, number>> = {capture: 0, 'exit-input': 1, 'close-pane': 2, sigkill: 3};

/** `1.5 KB` style sizes. */
export function formatBytes(bytes: number): string {
	if (bytes < 1024) return `${bytes} B`;
	const units = ['KB', 'MB', 'GB', 'TB'];
	let value = bytes / 1024;
	let unit = 0;
	while (value >= 1024 && unit < units.length - 1) {
		value /= 1024;
		unit += 1;
	}
	return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** One stop progress line: `step 1 exit-input  failed   10.0s  the agent … is still running`. */
export function formatStopProgress(progress: StopProgress): string {
	const step = `step ${STEP_NUMBER[progress.step]} ${progress.step}`.padEnd(17);
	const seconds = `${(progress.elapsedMs / 1000).toFixed(1)}s`.padStart(6);
	return `${step} ${progress.state.padEnd(7)} ${seconds}  ${progress.message}`;
}

/** The last lines of a stop: which step ended it, and any survivor. */
export function formatStopOutcome(outcome: StopOutcome): string[] {
	const ended =
		outcome.endedBy === 'nothing-running'
			? `${outcome.session}: nothing was running; marked stopped`
			: `${outcome.session}: stopped at step ${STEP_NUMBER[outcome.endedBy]} (${outcome.endedBy})`;
	const survivors =
		outcome.survivors.length === 0
			? outcome.captured.length > 0
				? ['no process of the session is left']
				: []
			: [`still alive: ${outcome.survivors.map(p => `pid ${p.pid} (${p.name})`).join(', ')}`];
	return [ended, ...survivors, ...outcome.notes.map(n => `note: ${n}`)];
}

/** Where one plan item is: the path, with the table and row count or the line / key count. */
function itemWhere(item: PlanItem): string {
	if (item.kind === 'rows') return `${item.path} table ${item.table ?? '?'}: ${item.count ?? '?'} rows`;
	if (item.kind === 'lines') return `${item.path}: ${item.count ?? '?'} lines`;
	if (item.kind === 'key') return `${item.path}: ${item.count ?? '?'} key${item.count === 1 ? '' : 's'}`;
	return item.path;
}

/** The plan as the user reviews it before confirming: every path and row, sizes, child sessions. */
export function formatPlan(view: PurgePlanView): string[] {
	const {plan} = view;
	const lines = [`purge ${view.label} (${view.agent} conversation ${view.id})`];
	if (plan.descendants.length > 0) lines.push(`  child sessions: ${plan.descendants.join(', ')}`);
	if (plan.items.length === 0) lines.push('  nothing on disk names this conversation');
	for (const item of plan.items) {
		const child = item.sessionId === view.id ? '' : ` [child session ${item.sessionId}]`;
		lines.push(`  ${item.kind.padEnd(5)} ${formatBytes(item.bytes).padStart(8)}  ${itemWhere(item)}  — ${item.description}${child}`);
	}
	for (const kept of plan.kept ?? []) lines.push(`  kept           ${kept.path}  — ${kept.reason}`);
	for (const changed of plan.changed ?? []) lines.push(`  changed        ${changed.path}  — ${changed.reason}`);
	const rows = view.session ? [`  registry row ${view.session.name}: marked purged (its audit history is kept)`] : [];
	return [...lines, ...rows, `  total ${formatBytes(plan.totalBytes)} in ${plan.items.length} item${plan.items.length === 1 ? '' : 's'}`];
}

/** What a finished purge reports: removed, warnings, and every residual line. */
export function formatPurgeResult(result: PurgeResult): string[] {
	const lines = [`${result.label}: removed ${result.removed.length} item${result.removed.length === 1 ? '' : 's'}`];
	for (const warning of result.warnings) lines.push(`  warning: ${warning}`);
	if (result.residual.length === 0) lines.push('  residual: nothing left');
	else lines.push(`  residual: ${result.residual.length} left`, ...result.residual.map(r => `    ${r}`));
	if (result.trashId) lines.push(`  kept in the trash as ${result.trashId}; undo with: mam-tui restore ${result.trashId}`);
	return lines;
}
