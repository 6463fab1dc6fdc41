/**
 * The herdr protocols mam-tui knows, and what differs between them (PROTOCOL 14). `protocol` is
 * herdr's private client/server number; its JSON API never checks a client's number, so this
 * table is where mam-tui decides which numbers it talks to.
 *
 * Every request and response shape mam-tui uses is the same in 20 and 22, and mam-tui is written
 * so that none of the differences below changes what it does: it subscribes before it takes a
 * snapshot and de-duplicates events (so a replay is harmless and its absence loses nothing), it
 * matches answers by connection (so the id of an `invalid_request` does not matter), and it reads
 * no capability. The fake herdr in the tests plays each row as written here.
 */
export interface HerdrProtocol {
	readonly protocol: number;
	/** The herdr releases that answer `ping` with this number. */
	readonly releases: string;
	/** A new lifecycle subscriber first gets recent past events again (PROTOCOL 5.4); 0.9 stopped that. */
	readonly replaysLifecycle: boolean;
	/** `invalid_request` keeps a string id of the bad line (20 always answered `""`). */
	readonly invalidRequestKeepsId: boolean;
	/** The `pong.capabilities` fields this protocol's schema defines. */
	readonly capabilities: readonly string[];
}

export const HERDR_PROTOCOLS: readonly HerdrProtocol[] = [
	{
		protocol: 20,
		releases: '0.8',
		replaysLifecycle: true,
		invalidRequestKeepsId: false,
		capabilities: ['live_handoff', 'detached_server_daemon'],
	},
	{
		protocol: 22,
		releases: '0.9',
		replaysLifecycle: false,
		invalidRequestKeepsId: true,
		capabilities: ['live_handoff', 'detached_server_daemon', 'endpoint_protocol_generation', 'surface_interest', 'health_check'],
	},
];

const OLDEST = HERDR_PROTOCOLS[0] as HerdrProtocol;
const NEWEST = HERDR_PROTOCOLS[HERDR_PROTOCOLS.length - 1] as HerdrProtocol;

/** How mam-tui takes the protocol a herdr answered `ping` with. */
export type ProtocolVerdict =
	| {readonly kind: 'known'; readonly as: HerdrProtocol}
	/** Not in the table but not older than it: talked to as `as`, and the health line says so. */
	| {readonly kind: 'untested'; readonly protocol: number; readonly as: HerdrProtocol}
	| {readonly kind: 'refused'; readonly protocol: number; readonly message: string};

/**
 * The rule (README "herdr integration"): a known protocol is used as it is. A number at least as new as
 * the oldest known one but not in the table is not refused on the number alone, because herdr
 * only ever added to the shapes mam-tui reads and wire.ts checks every answer it uses: it is
 * treated as the nearest known protocol below it and reported as untested. Anything older than
 * the oldest known protocol predates the API mam-tui was written against and is refused.
 */
export function judgeProtocol(protocol: number, version: string, socketPath: string): ProtocolVerdict {
	const known = HERDR_PROTOCOLS.find(p => p.protocol === protocol);
	if (known) return {kind: 'known', as: known};
	if (protocol > OLDEST.protocol) {
		const below = HERDR_PROTOCOLS.filter(p => p.protocol < protocol);
		return {kind: 'untested', protocol, as: below[below.length - 1] ?? NEWEST};
	}
	const names = HERDR_PROTOCOLS.map(p => `${p.protocol} (herdr ${p.releases})`).join(' and ');
	return {
		kind: 'refused',
		protocol,
		message: `herdr ${version} at ${socketPath} speaks protocol ${protocol}, older than any mam-tui knows (${names}); upgrade herdr to ${NEWEST.releases} or later`,
	};
}

/** The protocol part of the health line: `protocol 22`, or `untested protocol 23, treating as 22`. */
export function protocolLabel(verdict: Exclude<ProtocolVerdict, {kind: 'refused'}>): string {
	return verdict.kind === 'known' ? `protocol ${verdict.as.protocol}` : `untested protocol ${verdict.protocol}, treating as ${verdict.as.protocol}`;
}
