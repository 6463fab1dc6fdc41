/** A value or a reason, for operations whose failure is an expected outcome, not a bug. */
export type Result<T, E = string> = {readonly ok: true; readonly value: T} | {readonly ok: false; readonly error: E};

export const ok = <T>(value: T): Result<T, never> => ({ok: true, value});
export const err = <E>(error: E): Result<never, E> => ({ok: false, error});

/** Exhaustiveness guard for switches over unions. */
export function assertNever(value: never): never {
	throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}

/** Error message of anything thrown, for user-facing text. */
export function messageOf(error: unknown): string {
	if (error instanceof Error) return error.message;
	return String(error);
}
