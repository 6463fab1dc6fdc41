import {describe, expect, it} from 'vitest';
import {HERDR_PROTOCOLS, judgeProtocol, protocolLabel} from '../../src/mux/herdr/protocol.js';

describe('which herdr protocols mam-tui talks to (the rule in the README)', () => {
	it('knows 20 (herdr 0.8, replays) and 22 (herdr 0.9, no replay, keeps the id of a bad request)', () => {
		expect(HERDR_PROTOCOLS.map(p => [p.protocol, p.releases, p.replaysLifecycle, p.invalidRequestKeepsId])).toEqual([
			[20, '0.8', true, false],
			[22, '0.9', false, true],
		]);
		expect(HERDR_PROTOCOLS[1]?.capabilities).toEqual(expect.arrayContaining(['endpoint_protocol_generation', 'surface_interest', 'health_check']));
	});

	it.each([20, 22])('uses known protocol %i as it is', protocol => {
		const verdict = judgeProtocol(protocol, 'x', '/s');
		expect(verdict).toMatchObject({kind: 'known', as: {protocol}});
		if (verdict.kind !== 'refused') expect(protocolLabel(verdict)).toBe(`protocol ${protocol}`);
	});

	it.each([
		[21, 20],
		[23, 22],
		[99, 22],
	])('treats untested protocol %i as %i and says so', (protocol, as) => {
		const verdict = judgeProtocol(protocol, '0.10.0', '/s');
		expect(verdict).toMatchObject({kind: 'untested', protocol, as: {protocol: as}});
		if (verdict.kind !== 'refused') expect(protocolLabel(verdict)).toBe(`untested protocol ${protocol}, treating as ${as}`);
	});

	it.each([0, 1, 19])('refuses protocol %i, older than any it knows, saying what to do', protocol => {
		expect(judgeProtocol(protocol, '0.7.3', '/run/h.sock')).toEqual({
			kind: 'refused',
			protocol,
			message: `herdr 0.7.3 at /run/h.sock speaks protocol ${protocol}, older than any mam-tui knows (20 (herdr 0.8) and 22 (herdr 0.9)); upgrade herdr to 0.9 or later`,
		});
	});
});
