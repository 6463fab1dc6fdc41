import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {jsonl, writeFile} from './files.js';

// Gemini CLI homes in the shape the real gemini 0.61.0 writes (FORMATS 4):
// tmp/<slug>/.project_root, chats/session-<minute>-<id8>.jsonl with a header record, `$set`
// patches and message records; sub-agents in chats/<parent>/<id>.jsonl.

export function geminiRoot(home: string): string {
	return path.join(home, '.gemini');
}

/** `tmp/<slug>/` with its `.project_root`, plus projects.json and history/<slug>/ as gemini keeps them. */
export function writeGeminiProject(home: string, slug: string, cwd: string): string {
	const root = geminiRoot(home);
	const dir = path.join(root, 'tmp', slug);
	writeFile(path.join(dir, '.project_root'), cwd);
	writeFile(path.join(root, 'history', slug, '.project_root'), cwd);
	const registry = path.join(root, 'projects.json');
	const projects = fs.existsSync(registry) ? (JSON.parse(fs.readFileSync(registry, 'utf8')) as {projects: Record<string, string>}).projects : {};
	writeFile(registry, `${JSON.stringify({projects: {...projects, [cwd]: slug}}, null, 2)}`);
	return dir;
}

const projectHash = (cwd: string) => crypto.createHash('sha256').update(cwd).digest('hex');
const iso = (ms: number) => new Date(ms).toISOString();

function contextMessage(cwd: string, at: number) {
	const text = `<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n- **Workspace Directories:**\n  - ${cwd}\n</session_context>`;
	return {id: crypto.randomBytes(16).toString('hex'), timestamp: iso(at), type: 'user', content: [{text}]};
}

/** The records of one run of a main session: header, context, one user turn and one reply. */
function mainRun(id: string, cwd: string, at: number, prompt: string): unknown[] {
	return [
		{sessionId: id, projectHash: projectHash(cwd), startTime: iso(at), lastUpdated: iso(at), kind: 'main'},
		{$set: {messages: [contextMessage(cwd, at)], lastUpdated: iso(at + 1)}},
		{id: crypto.randomUUID(), timestamp: iso(at + 50), type: 'user', content: [{text: prompt}]},
		{$set: {lastUpdated: iso(at + 50)}},
		{id: crypto.randomUUID(), timestamp: iso(at + 120), type: 'gemini', content: 'Hello from the fake model.', thoughts: [], model: 'gemini-3.8-flash'},
		{$set: {lastUpdated: iso(at + 120)}},
	];
}

/** `session-<UTC minute>-<first 8 chars>.jsonl`, as chatRecordingService names it. */
export function chatFileName(id: string, at: number): string {
	return `session-${iso(at).slice(0, 16).replaceAll(':', '-')}-${id.slice(0, 8)}.jsonl`;
}

export interface GeminiMainSpec {
	readonly id: string;
	readonly cwd: string;
	readonly createdAt: number;
	readonly prompt?: string;
	/** A later run appended to the same file (a resume within the same file). */
	readonly resumedAt?: number;
	/** A header-only stub written by a resume in a later minute (FORMATS 10). */
	readonly stubAt?: number;
	/** Only the header: a session that never got a message. */
	readonly empty?: boolean;
}

/** Write a main session's chat file(s) into a project folder; returns their paths. */
export function writeGeminiMain(projectDir: string, spec: GeminiMainSpec): string[] {
	const chats = path.join(projectDir, 'chats');
	const file = path.join(chats, chatFileName(spec.id, spec.createdAt));
	const records = spec.empty
		? [{sessionId: spec.id, projectHash: projectHash(spec.cwd), startTime: iso(spec.createdAt), lastUpdated: iso(spec.createdAt), kind: 'main'}]
		: mainRun(spec.id, spec.cwd, spec.createdAt, spec.prompt ?? 'hello');
	if (spec.resumedAt !== undefined) records.push(...mainRun(spec.id, spec.cwd, spec.resumedAt, 'again'), {$set: {sessionId: spec.id}});
	writeFile(file, jsonl(records));
	const files = [file];
	if (spec.stubAt !== undefined) {
		const stub = path.join(chats, chatFileName(spec.id, spec.stubAt));
		writeFile(
			stub,
			jsonl([{sessionId: spec.id, projectHash: projectHash(spec.cwd), startTime: iso(spec.stubAt), lastUpdated: iso(spec.stubAt), kind: 'main'}]),
		);
		files.push(stub);
	}
	return files;
}

/** A sub-agent transcript `chats/<parentId>/<id>.jsonl`. */
export function writeGeminiSubagent(projectDir: string, parentId: string, id: string, cwd: string, at: number): string {
	const file = path.join(projectDir, 'chats', parentId, `${id}.jsonl`);
	writeFile(
		file,
		jsonl([
			{sessionId: id, projectHash: projectHash(cwd), startTime: iso(at), lastUpdated: iso(at), kind: 'subagent', directories: [cwd]},
			{id: crypto.randomUUID(), timestamp: iso(at + 1), type: 'user', content: [{text: 'Your task is to investigate.'}]},
			{$set: {lastUpdated: iso(at + 1)}},
			{id: crypto.randomUUID(), timestamp: iso(at + 7), type: 'gemini', content: '', model: 'gemini-3-flash-preview'},
			{$set: {summary: '{"SummaryOfFindings": "fake"}'}},
		]),
	);
	return file;
}

/** Side artifacts gemini keeps per session: activity log, tool outputs, plans folder. */
export function writeGeminiArtifacts(projectDir: string, id: string): void {
	writeFile(path.join(projectDir, 'logs', `session-${id}.jsonl`), jsonl([{sessionId: id, type: 'tool', at: 1}]));
	writeFile(path.join(projectDir, 'tool-outputs', `session-${id}`, 'call-1.txt'), 'output\n');
	writeFile(path.join(projectDir, id, 'plans', 'plan.md'), '# plan\n');
}
