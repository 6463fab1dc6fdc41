/**
 * Import the dashboard (React, Ink, the components) lazily, in React's production build: the
 * development build checks every render and is several times slower. NODE_ENV is set only while
 * React loads (it reads it once), so the processes mam-tui starts later do not inherit it; a
 * NODE_ENV the user set is left alone.
 */
export async function loadDashboard(): Promise<typeof import('../main.js')> {
	const before = process.env['NODE_ENV'];
	if (before === undefined) process.env['NODE_ENV'] = 'production';
	try {
		return await import('../main.js');
	} finally {
		if (before === undefined) delete process.env['NODE_ENV'];
	}
}
