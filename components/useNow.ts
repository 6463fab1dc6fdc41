import {useEffect, useState} from 'react';

/**
 * The current time, re-read every `intervalMs` while `active` (spinners, elapsed times). Idle
 * dashboards tick only once a minute so they cost no CPU.
 */
export function useNow(active: boolean, intervalMs = 100): number {
	const [now, setNow] = useState(() => Date.now());
	useEffect(() => {
		const timer = setInterval(() => setNow(Date.now()), active ? intervalMs : 60_000);
		return () => clearInterval(timer);
	}, [active, intervalMs]);
	return now;
}
