import React from 'react';
import {Box, Text} from 'ink';
import type {OperationView, StepView} from '../../src/store/state.js';
import {printable, seconds} from '../format.js';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface OperationsPanelProps {
	readonly operations: Readonly<Record<string, OperationView>>;
	readonly now: number;
	/** Lines at most: the newest operations. */
	readonly limit?: number;
}

function stepMark(step: StepView, now: number): string {
	switch (step.state) {
		case 'running':
			return SPINNER[Math.floor(now / 100) % SPINNER.length] ?? '…';
		case 'done':
			return '✓';
		case 'failed':
			return '✗';
		case 'skipped':
			return '-';
		case 'pending':
			return '·';
	}
}

function stepText(step: StepView, now: number): string {
	const elapsed = step.startedAt ? ` ${seconds(Math.max(0, (step.endedAt ?? now) - step.startedAt))}` : '';
	// Details only for the step in progress: finished steps keep the line short enough for 80 columns.
	const detail = step.state === 'running' && step.detail ? ` (${step.detail})` : '';
	return `${stepMark(step, now)} ${step.label}${elapsed}${detail}`;
}

/** A finished operation in one line: its outcome, each step's mark and number, the time it took. */
function outcomeLine(op: OperationView, outcome: NonNullable<OperationView['outcome']>): string {
	const marks = op.steps.filter(s => s.id !== 'capture').map(s => `${stepMark(s, 0)}${s.label.split(' ')[0] ?? ''}`);
	const took = seconds(Math.max(0, (op.endedAt ?? op.startedAt) - op.startedAt));
	// The text may come from another machine (a host's refusal): shown, never obeyed by the terminal.
	return printable(
		`${outcome.ok ? '✓' : '✗'} ${op.kind} ${op.session}: ${outcome.text}${marks.length ? ` (${marks.join(' ')})` : ''} in ${took}${outcome.ok ? '' : ' (esc dismisses)'}`,
	);
}

/**
 * Live progress of stops and other actions: one line per operation, its steps side by side while
 * it runs; once it ended, one line with its outcome (gone after a while; a failure stays until
 * dismissed — the reducer's `clock/expire` and `notice/dismiss`).
 */
export function OperationsPanel({operations, now, limit = Number.MAX_SAFE_INTEGER}: OperationsPanelProps): React.JSX.Element | null {
	const shown = Object.values(operations).slice(-limit);
	if (shown.length === 0) return null;
	return (
		<Box flexDirection="column">
			{shown.map(op =>
				op.outcome ? (
					<Text key={op.session} wrap="truncate" color={op.outcome.ok ? 'green' : 'red'}>
						{outcomeLine(op, op.outcome)}
					</Text>
				) : (
					<Text key={op.session} wrap="truncate">
						<Text bold>{printable(`${op.kind} ${op.session}`)}</Text>
						{` ${seconds(Math.max(0, now - op.startedAt))} │ `}
						{printable(op.steps.map(s => stepText(s, now)).join(' → '))}
					</Text>
				),
			)}
		</Box>
	);
}

export function anyRunning(operations: Readonly<Record<string, OperationView>>): boolean {
	return Object.values(operations).some(op => !op.endedAt);
}
