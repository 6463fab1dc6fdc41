import React from 'react';
import {Box, Text} from 'ink';
import type {OperationView, StepView} from '../../src/store/state.js';
import {seconds} from '../format.js';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** How long a finished operation stays on screen. */
export const OPERATION_LINGER_MS = 15_000;

export interface OperationsPanelProps {
	readonly operations: Readonly<Record<string, OperationView>>;
	readonly now: number;
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

/** Live progress of stops and other actions: one line per operation, its steps side by side. */
export function OperationsPanel({operations, now}: OperationsPanelProps): React.JSX.Element | null {
	const shown = Object.values(operations).filter(op => !op.endedAt || now - op.endedAt < OPERATION_LINGER_MS);
	if (shown.length === 0) return null;
	return (
		<Box flexDirection="column">
			{shown.map(op => (
				<Text key={op.session} wrap="truncate">
					<Text bold>{`${op.kind} ${op.session}`}</Text>
					{` ${seconds(Math.max(0, (op.endedAt ?? now) - op.startedAt))} │ `}
					{op.steps.map(s => stepText(s, now)).join(' → ')}
					{op.outcome ? <Text color={op.outcome.ok ? 'green' : 'red'}>{` │ ${op.outcome.text}`}</Text> : null}
				</Text>
			))}
		</Box>
	);
}

export function anyRunning(operations: Readonly<Record<string, OperationView>>): boolean {
	return Object.values(operations).some(op => !op.endedAt);
}
