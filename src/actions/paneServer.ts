import type {Multiplexer} from '../mux/types.js';

/**
 * The server a pane just opened lives in (one listing), so the row is never joined to a pane of
 * another or a restarted server; undefined when the listing fails or cannot tell.
 */
export async function serverOfPane(mux: Multiplexer, paneId: string): Promise<string | undefined> {
	try {
		return (await mux.listPanes()).find(p => p.id === paneId)?.server;
	} catch {
		return undefined;
	}
}
