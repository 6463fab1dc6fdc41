export interface ExecResult {
	readonly exitCode: number | undefined;
	readonly stdout: string;
	readonly stderr: string;
	/** Set when the command could not run at all (missing binary, timeout, signal). */
	readonly failure?: string;
}

export interface ExecOptions {
	readonly cwd?: string;
	readonly env?: Readonly<Record<string, string>>;
	readonly timeoutMs?: number;
	readonly input?: string;
}

/** The process-start port: argv arrays only, never a shell. Adapters and mux backends receive it. */
export type Exec = (file: string, args: readonly string[], options?: ExecOptions) => Promise<ExecResult>;

const DEFAULT_TIMEOUT_MS = 15_000;

/** The real Exec over execa. Never rejects: failures come back in the result. */
export const realExec: Exec = async (file, args, options = {}) => {
	// Loaded on first use: execa is ~140 modules, and the dashboard's first frame starts nothing.
	const {execa} = await import('execa');
	const result = await execa(file, [...args], {
		cwd: options.cwd,
		env: options.env,
		timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
		input: options.input,
		reject: false,
		stripFinalNewline: false,
		shell: false,
	});
	const failure = result.failed && result.exitCode === undefined ? result.shortMessage : undefined;
	return {
		exitCode: result.exitCode,
		stdout: typeof result.stdout === 'string' ? result.stdout : '',
		stderr: typeof result.stderr === 'string' ? result.stderr : '',
		...(failure ? {failure} : {}),
	};
};
