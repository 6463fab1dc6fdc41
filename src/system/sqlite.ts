import {createRequire} from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import './sqliteUri.js';

/** An open better-sqlite3 connection. */
export type SqliteDb = BetterSqlite3.Database;

/**
 * better-sqlite3, loaded with require: it is CommonJS, and the ESM loader's import of it (each of
 * its files lexed again for named exports) cost about 10 ms more of every start.
 */
export const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
