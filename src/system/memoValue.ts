// How the parse memo (./parseMemo.ts) writes a parsed value: JSON, exactly. Only plain data is
// kept (what JSON would change is refused), and a property whose value is undefined comes back
// present, in its place.

/** How deep a kept value may nest: a summary is a few levels; anything deeper is not kept. */
const MAX_DEPTH = 32;

/**
 * The properties of `value` whose value is undefined (their paths), or false when `value` is not
 * plain JSON data: a Map, Set, Date, class instance, function, bigint, symbol, non-finite number
 * or -0, an undefined array element, or nesting past MAX_DEPTH. JSON would turn each into
 * something else; such a value is simply not kept.
 */
function undefinedPaths(value: unknown, at: readonly (string | number)[], out: (string | number)[][]): boolean {
	if (at.length > MAX_DEPTH) return false;
	if (typeof value === 'string' || typeof value === 'boolean' || value === null) return true;
	if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0);
	if (typeof value !== 'object') return false;
	if (Array.isArray(value)) {
		if (Object.getPrototypeOf(value) !== Array.prototype) return false;
		for (let i = 0; i < value.length; i++) if (value[i] === undefined || !undefinedPaths(value[i], [...at, i], out)) return false;
		return true;
	}
	const proto: unknown = Object.getPrototypeOf(value);
	if ((proto !== Object.prototype && proto !== null) || Object.getOwnPropertySymbols(value).length > 0) return false;
	for (const [k, v] of Object.entries(value)) {
		if (v === undefined) out.push([...at, k]);
		else if (!undefinedPaths(v, [...at, k], out)) return false;
	}
	return true;
}

/**
 * `value` as the memo's text, or undefined when it is not plain JSON data (see `undefinedPaths`).
 * Exact: a property present with the value undefined comes back present (`u` lists them), and
 * an undefined value comes back undefined.
 */
export function encodeValue(value: unknown): string | undefined {
	if (value === undefined) return '{}';
	const missing: (string | number)[][] = [];
	if (!undefinedPaths(value, [], missing)) return undefined;
	if (missing.length === 0) return JSON.stringify({v: value});
	// Each undefined property written as null in its place (key order kept), and named in `u`.
	return JSON.stringify({v: value, u: missing}, function (this: unknown, _key, v: unknown) {
		return v === undefined && !Array.isArray(this) ? null : v;
	});
}

/** What `encodeValue` wrote, back as a value; `{ok: false}` when the text is not such a value. */
export function decodeValue(text: string): {ok: true; value: unknown} | {ok: false} {
	try {
		const parsed = JSON.parse(text) as {v?: unknown; u?: unknown};
		if (typeof parsed !== 'object' || parsed === null) return {ok: false};
		if (!('v' in parsed)) return {ok: true, value: undefined};
		const value = parsed.v;
		if (Array.isArray(parsed.u)) {
			for (const p of parsed.u as unknown[]) {
				if (!Array.isArray(p) || p.length === 0) return {ok: false};
				let node: unknown = value;
				for (const step of p.slice(0, -1)) node = (node as Record<string | number, unknown> | undefined)?.[step as string];
				if (typeof node !== 'object' || node === null) return {ok: false};
				(node as Record<string, unknown>)[p.at(-1) as string] = undefined;
			}
		}
		return {ok: true, value};
	} catch {
		return {ok: false};
	}
}
