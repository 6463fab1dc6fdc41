// Turns a terminal capture (`tmux capture-pane -e`: text with SGR escapes) into an HTML page that
// looks like the terminal, for the README's screenshots (src/build/screenshots.mjs).

/** xterm's 16 colours, as a dark terminal theme draws them. */
const PALETTE = [
	'#1d1f21',
	'#cc6666',
	'#8fbf6a',
	'#e0b860',
	'#81a2be',
	'#b294bb',
	'#7fc1ca',
	'#c5c8c6',
	'#666a6e',
	'#ff7b7b',
	'#b5e07a',
	'#f0d080',
	'#a3c4e6',
	'#d2b4dc',
	'#9fe0e8',
	'#ffffff',
];
const FOREGROUND = '#d0d3d0';
const BACKGROUND = '#1d1f21';

/** The 256-colour cube and greys, after the 16 named ones. */
function color256(n) {
	if (n < 16) return PALETTE[n];
	if (n >= 232) {
		const v = 8 + (n - 232) * 10;
		return `rgb(${v},${v},${v})`;
	}
	const i = n - 16;
	const step = v => (v === 0 ? 0 : 55 + v * 40);
	return `rgb(${step(Math.floor(i / 36))},${step(Math.floor(i / 6) % 6)},${step(i % 6)})`;
}

const escapeHtml = text => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Apply one SGR sequence's parameters to the current style. */
function applySgr(style, params) {
	const next = {...style};
	for (let i = 0; i < params.length; i++) {
		const p = params[i];
		if (p === 0) Object.assign(next, {fg: undefined, bg: undefined, bold: false, dim: false, inverse: false, underline: false});
		else if (p === 1) next.bold = true;
		else if (p === 2) next.dim = true;
		else if (p === 4) next.underline = true;
		else if (p === 7) next.inverse = true;
		else if (p === 22) Object.assign(next, {bold: false, dim: false});
		else if (p === 24) next.underline = false;
		else if (p === 27) next.inverse = false;
		else if (p >= 30 && p <= 37) next.fg = PALETTE[p - 30];
		else if (p >= 90 && p <= 97) next.fg = PALETTE[p - 90 + 8];
		else if (p === 39) next.fg = undefined;
		else if (p >= 40 && p <= 47) next.bg = PALETTE[p - 40];
		else if (p >= 100 && p <= 107) next.bg = PALETTE[p - 100 + 8];
		else if (p === 49) next.bg = undefined;
		else if ((p === 38 || p === 48) && params[i + 1] === 5) {
			next[p === 38 ? 'fg' : 'bg'] = color256(params[i + 2] ?? 0);
			i += 2;
		} else if ((p === 38 || p === 48) && params[i + 1] === 2) {
			next[p === 38 ? 'fg' : 'bg'] = `rgb(${params[i + 2] ?? 0},${params[i + 3] ?? 0},${params[i + 4] ?? 0})`;
			i += 4;
		}
	}
	return next;
}

function css(style) {
	let fg = style.fg ?? FOREGROUND;
	let bg = style.bg;
	if (style.inverse) [fg, bg] = [bg ?? BACKGROUND, fg];
	const rules = [`color:${fg}`];
	if (bg) rules.push(`background:${bg}`);
	if (style.bold) rules.push('font-weight:bold');
	if (style.dim) rules.push('opacity:0.6');
	if (style.underline) rules.push('text-decoration:underline');
	return rules.join(';');
}

/** The capture as HTML spans, one `<div>` per terminal line, `columns` cells wide. */
export function ansiToHtmlLines(capture, columns) {
	let style = {};
	return capture
		.replace(/\n$/, '')
		.split('\n')
		.map(line => {
			let html = '';
			let width = 0;
			const parts = line.split(/(\u001B\[[0-9;]*m)/);
			for (const part of parts) {
				const sgr = /^\u001B\[([0-9;]*)m$/.exec(part);
				if (sgr) {
					style = applySgr(style, sgr[1] === '' ? [0] : sgr[1].split(';').map(Number));
					continue;
				}
				// Other escapes (none expected in a capture) are dropped, never shown.
				const text = part.replace(/\u001B\[[0-9;?]*[A-Za-z]/g, '');
				if (text === '') continue;
				width += [...text].length;
				html += `<span style="${css(style)}">${escapeHtml(text)}</span>`;
			}
			if (width < columns) html += ' '.repeat(columns - width);
			return `<div>${html}</div>`;
		});
}

/** A whole page: the capture on a terminal-coloured background, `columns` × `rows` cells. */
export function ansiToHtmlPage(capture, {columns, rows, title}) {
	const lines = ansiToHtmlLines(capture, columns);
	while (lines.length < rows) lines.push('<div> </div>');
	return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>
html, body { margin: 0; background: ${BACKGROUND}; }
pre { margin: 0; padding: 12px 14px; font: 14px/17px 'DejaVu Sans Mono', monospace; color: ${FOREGROUND}; white-space: pre; }
pre div { height: 17px; }
</style></head>
<body><pre>${lines.join('')}</pre></body></html>
`;
}
