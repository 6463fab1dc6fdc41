const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const CONTROL_ALL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * `raw` with each control character shown as `?`: a name with a newline (or an escape from a
 * hostile host or a transcript) must not break a line or drive the terminal.
 */
export function printable(raw: string): string {
	return CONTROL.test(raw) ? raw.replace(CONTROL_ALL, '?') : raw;
}
