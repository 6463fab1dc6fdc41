/**
 * Trial counts for the randomized reliability tests. `npm test` (CI) runs the small budget so
 * the suite stays within a few minutes on two cores; `npm run test:soak` sets MAM_SOAK=1 and
 * runs the long one. MAM_SEED replays a fast-check run a failure printed.
 */
export const SOAK = process.env['MAM_SOAK'] === '1';

/** `ci` trials normally, `soak` under MAM_SOAK=1. */
export function trials(ci: number, soak: number): number {
	return SOAK ? soak : ci;
}

/** fast-check options shared by the suite: a fixed seed when MAM_SEED asks for one. */
export function fcOptions(numRuns: number): {numRuns: number; seed?: number; endOnFailure: boolean} {
	const seed = process.env['MAM_SEED'];
	return {numRuns, endOnFailure: !SOAK, ...(seed ? {seed: Number(seed)} : {})};
}

/** A vitest timeout that grows with the trial budget. */
export function budgetMs(ci: number, soak: number): number {
	return SOAK ? soak : ci;
}
