// Fixtures that build databases with better-sqlite3 directly may load its addon before mam-tui's
// first open does; the addon reads SQLITE_USE_URI once, when it loads (src/system/sqlite.ts sets
// it around each of its own opens). Importing this first keeps the trace-free URI reads working.
process.env['SQLITE_USE_URI'] = '1';
export {};
