// better-sqlite3 is built with SQLITE_USE_URI=0 and reads this variable once, when its addon
// first loads. The trace-free reads of SPEC 4.3 need `file:…?mode=ro&immutable=1` URIs, so every
// module that opens a database imports this first.
process.env['SQLITE_USE_URI'] = '1';
export {};
