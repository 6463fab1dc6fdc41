/**
 * Id shapes that begin with the time they were made, so every id made the same minute shares its
 * first characters (seen on the real CLIs: three codex conversations started a few seconds apart
 * were all `01a22b1d-…`, a day's hermes sessions all `20261207_…`):
 * - a UUIDv7 (codex, grok): 48 bits of milliseconds first;
 * - `YYYYMMDD_HHMMSS_<hex>` (hermes);
 * - `ses_` + 12 hex digits of time + 14 random characters (opencode).
 * Only their end tells them apart.
 */
const TIME_FIRST = [/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i, /^\d{8}_\d{6}_[0-9a-f]+$/, /^ses_[0-9a-f]{12}[0-9A-Za-z]+$/];

/** Marks where a shortened id was cut, as the tables mark a cut cell. */
const CUT = '~';

/**
 * `id` in at most `width` characters that still tell it apart from the ids made beside it: its
 * start, or (for an id that begins with its time) its end, the cut side marked with `~`.
 */
export function shortId(id: string, width: number): string {
	if (id.length <= width) return id;
	const keep = Math.max(0, width - CUT.length);
	// A tail that starts at a separator drops it: `~6253868f587f`, not `~-6253868f587f`.
	return TIME_FIRST.some(shape => shape.test(id)) ? `${CUT}${id.slice(id.length - keep).replace(/^[-_]+/, '')}` : `${id.slice(0, keep)}${CUT}`;
}
