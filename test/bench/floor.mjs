// The cold-start floor: start Node, import Ink and React, render one Text. mam-tui's dashboard is
// compared with this on the same machine in the same run. Plain JavaScript (no tsx), like the
// built CLI, and React's production build, as the dashboard loads it (src/cli/loadDashboard.ts).
// MAM_BENCH_FIRST_FRAME=<file> receives Date.now() when the first frame is rendered, exactly as
// the dashboard's hook does (src/main.tsx).
import fs from 'node:fs';

process.env.NODE_ENV ??= 'production';
const React = await import('react');
const {render, Text} = await import('ink');

const file = process.env.MAM_BENCH_FIRST_FRAME;
let written = false;
render(React.createElement(Text, null, 'mam-tui cold-start floor: node + ink + react, one Text'), {
	exitOnCtrlC: false,
	onRender() {
		if (written || !file) return;
		written = true;
		fs.writeFileSync(file, String(Date.now()));
	},
});
// Stay up like the dashboard does, until the bench closes the window.
setInterval(() => undefined, 1 << 30);
