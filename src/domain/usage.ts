// Token figures as the agents recorded them: summing and showing them. Unknown stays unknown: a
// conversation whose agent records no usage shows `—`, never 0.

/**
 * Tokens a conversation used, from the agent's own records. A field the agent does not record is
 * undefined (shown `—`), never 0.
 */
export interface TokenUsage {
	readonly input?: number;
	readonly output?: number;
	/** Input tokens read from the provider's prompt cache. */
	readonly cacheRead?: number;
	/** Input tokens written to the provider's prompt cache. */
	readonly cacheWrite?: number;
}

/** `a + b` field by field; a field neither knows stays absent. */
export function addTokenUsage(a: TokenUsage | undefined, b: TokenUsage): TokenUsage {
	const sum: {input?: number; output?: number; cacheRead?: number; cacheWrite?: number} = {};
	for (const k of ['input', 'output', 'cacheRead', 'cacheWrite'] as const) {
		const x = a?.[k];
		const y = b[k];
		if (x !== undefined || y !== undefined) sum[k] = (x ?? 0) + (y ?? 0);
	}
	return sum;
}

/** A token figure, `—` when unknown. */
export function tokens(n: number | undefined): string {
	if (n === undefined) return '—';
	return n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)}M` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/** Cache reads and writes together; undefined when the agent records neither. */
export function cacheTokens(u: TokenUsage): number | undefined {
	return u.cacheRead === undefined && u.cacheWrite === undefined ? undefined : (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
}

/** `in 12.3k out 4k cache 1.1M`, or `—`. */
export function usageLine(u: TokenUsage | undefined): string {
	if (!u) return '—';
	return `in ${tokens(u.input)} out ${tokens(u.output)} cache ${tokens(cacheTokens(u))}`;
}

/** `12.3k/4k/1.1M` (in/out/cache) for a table cell, or `—`. */
export function usageCell(u: TokenUsage | undefined): string {
	if (!u) return '—';
	return `${tokens(u.input)}/${tokens(u.output)}/${tokens(cacheTokens(u))}`;
}

/** The tokens of `cwd`'s conversations in `conversations` summed: how many had figures, of how many. */
export function folderUsage(
	conversations: readonly {readonly agent: string; readonly id: string; readonly cwd: string}[],
	usage: ReadonlyMap<string, TokenUsage>,
	cwd: string,
): {usage?: TokenUsage; counted: number; total: number} {
	let sum: TokenUsage | undefined;
	let counted = 0;
	let total = 0;
	for (const c of conversations) {
		if (c.cwd !== cwd) continue;
		total++;
		const u = usage.get(`${c.agent}:${c.id}`);
		if (!u) continue;
		counted++;
		sum = addTokenUsage(sum, u);
	}
	return {...(sum ? {usage: sum} : {}), counted, total};
}
