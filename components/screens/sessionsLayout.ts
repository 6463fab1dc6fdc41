import type {Finding} from '../../src/domain/types.js';
import {findingsFor, visibleSessions, type SessionsView} from '../../src/store/selectors.js';
import {detailRoom} from '../widgets/DetailPanel.js';
import {detailLines, type PanelLine} from '../widgets/detailLines.js';

/** Width from which the detail panel sits beside the list instead of under it. */
export const SIDE_BY_SIDE_WIDTH = 170;
/** The detail panel never gets fewer lines than this (border included). */
const MIN_DETAIL_LINES = 6;

export interface SessionsLayout {
	readonly side: boolean;
	readonly listWidth: number;
	/** Table rows shown (the header and the `a–b of n` line come on top). */
	readonly listRows: number;
	readonly detailWidth: number;
	readonly detailHeight: number;
}

/**
 * Where the list and the detail panel go in `width` × `height`: side by side on wide terminals;
 * else the list takes what its rows need up to half the height, the detail panel the rest, so a
 * tall terminal shows a tall detail panel.
 */
export function sessionsLayout(width: number, height: number, filtering: boolean, rowCount: number): SessionsLayout {
	const avail = Math.max(MIN_DETAIL_LINES + 4, height - (filtering ? 1 : 0));
	if (width >= SIDE_BY_SIDE_WIDTH) {
		const listWidth = Math.floor(width * 0.6);
		return {side: true, listWidth, listRows: Math.max(3, avail - 2), detailWidth: width - listWidth, detailHeight: avail};
	}
	const listRows = Math.max(3, Math.min(rowCount, Math.floor(avail / 2)));
	const listBlock = 1 + listRows + (rowCount > listRows ? 1 : 0);
	return {side: false, listWidth: width, listRows, detailWidth: width, detailHeight: Math.max(MIN_DETAIL_LINES, avail - listBlock)};
}

/** The detail panel's text width inside its border and padding. */
export function detailTextWidth(layout: SessionsLayout): number {
	return Math.max(10, layout.detailWidth - 4);
}

/** The selected session's detail lines at this layout (what the panel shows and what J/K scroll). */
export function selectedDetailLines(state: Omit<SessionsView, 'untracked'>, layout: SessionsLayout, home: string, findings?: readonly Finding[]): PanelLine[] {
	const rows = visibleSessions(state);
	const selected = rows[Math.min(state.ui.cursor, rows.length - 1)];
	if (!selected) return [];
	return detailLines(
		{session: selected, live: state.live[selected.name], detail: state.detail, findings: findings ?? findingsFor(state, selected), home},
		detailTextWidth(layout),
	);
}

/** The largest useful detail scroll at this screen size: the last page of the selected session's detail. */
export function maxDetailScroll(state: Omit<SessionsView, 'untracked'>, width: number, height: number, home: string): number {
	const filtering = state.ui.mode === 'filter' || state.ui.filter !== '';
	const layout = sessionsLayout(width, height, filtering, visibleSessions(state).length);
	return Math.max(0, selectedDetailLines(state, layout, home).length - detailRoom(layout.detailHeight));
}
