import {StoreReadError} from '../../system/sqliteRead.js';

/**
 * `read()`, or, when the store cannot be read (locked, corrupt, an unexpected schema: a
 * StoreReadError), `unreadable(why)`: a problem line, an `unknown`, a store skipped. Any other
 * error is a bug and propagates.
 */
export function unlessUnreadable<T, U>(read: () => T, unreadable: (problem: string) => U): T | U {
	try {
		return read();
	} catch (error) {
		if (error instanceof StoreReadError) return unreadable(error.message);
		throw error;
	}
}
