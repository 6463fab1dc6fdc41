import crypto from 'node:crypto';

/** A small deterministic PRNG (sfc32 seeded by splitmix32): the same seed gives the same world. */
export class Rng {
	private a: number;
	private b: number;
	private c: number;
	private d: number;

	constructor(seed: number) {
		let s = seed >>> 0;
		const split = (): number => {
			s = (s + 0x9e3779b9) >>> 0;
			let z = s;
			z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
			z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
			return (z ^ (z >>> 16)) >>> 0;
		};
		this.a = split();
		this.b = split();
		this.c = split();
		this.d = split();
	}

	/** A float in [0, 1). */
	next(): number {
		const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
		this.d = (this.d + 1) >>> 0;
		this.a = this.b ^ (this.b >>> 9);
		this.b = (this.c + (this.c << 3)) >>> 0;
		this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
		this.c = (this.c + t) >>> 0;
		return t / 4294967296;
	}

	/** An integer in [0, n). */
	int(n: number): number {
		return Math.floor(this.next() * n);
	}

	pick<T>(items: readonly T[]): T {
		const item = items[this.int(items.length)];
		if (item === undefined) throw new Error('pick from an empty list');
		return item;
	}

	/** Index by weight (weights need not sum to 1). */
	weighted(weights: readonly number[]): number {
		const total = weights.reduce((a, b) => a + b, 0);
		let x = this.next() * total;
		for (const [i, w] of weights.entries()) {
			x -= w;
			if (x < 0) return i;
		}
		return weights.length - 1;
	}

	bytes(n: number): Buffer {
		const out = Buffer.alloc(n);
		for (let i = 0; i < n; i++) out[i] = this.int(256);
		return out;
	}

	/** A UUID v4 string. */
	uuid(): string {
		const b = this.bytes(16);
		b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
		b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
		const hex = b.toString('hex');
		return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
	}
}

type RandomBytes = typeof crypto.randomBytes;

/**
 * Run `fn` with `crypto.randomUUID` and `crypto.randomBytes` drawing from `rng`. The fixture
 * writers in test/adapters/fixtures mint their inner ids (message ids, parts) with node:crypto;
 * this makes what they write a function of the seed without changing them. Synchronous only,
 * restored afterwards.
 */
export function withSeededCrypto<T>(rng: Rng, fn: () => T): T {
	const target = crypto as unknown as {randomUUID: () => string; randomBytes: RandomBytes};
	const saved = {randomUUID: target.randomUUID, randomBytes: target.randomBytes};
	target.randomUUID = () => rng.uuid();
	target.randomBytes = ((n: number) => rng.bytes(n)) as unknown as RandomBytes;
	try {
		return fn();
	} finally {
		target.randomUUID = saved.randomUUID;
		target.randomBytes = saved.randomBytes;
	}
}
