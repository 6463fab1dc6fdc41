import {useEffect, useState} from 'react';
import {useStdout} from 'ink';

export interface TerminalSize {
	readonly columns: number;
	readonly rows: number;
}

function sizeOf(stdout: NodeJS.WriteStream): TerminalSize {
	return {columns: stdout.columns || 80, rows: stdout.rows || 24};
}

/**
 * The terminal's size, re-read on every resize. Ink lays the old tree out again on a resize but
 * does not re-render it, and the screens size their windows from these numbers.
 */
export function useTerminalSize(): TerminalSize {
	const {stdout} = useStdout();
	const [size, setSize] = useState(() => sizeOf(stdout));
	useEffect(() => {
		const onResize = () =>
			setSize(previous => {
				const next = sizeOf(stdout);
				return next.columns === previous.columns && next.rows === previous.rows ? previous : next;
			});
		stdout.on('resize', onResize);
		onResize();
		return () => {
			stdout.off('resize', onResize);
		};
	}, [stdout]);
	return size;
}
