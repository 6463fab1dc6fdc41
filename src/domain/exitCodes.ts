/** CLI exit codes with the meanings SPEC 3 gives them. The only place these numbers live. */
export const EXIT = {
	ok: 0,
	failed: 1,
	usage: 2,
	notFound: 3,
	inUse: 4,
	residual: 5,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error that carries the exit code it should end the CLI with. */
export class CliError extends Error {
	readonly code: ExitCode;
	constructor(message: string, code: ExitCode) {
		super(message);
		this.code = code;
		this.name = 'CliError';
	}
}
