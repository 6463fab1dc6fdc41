import crypto from 'node:crypto';
import {jsonl} from './files.js';

// Claude Code 2.1.197 on disk (FORMATS 1): `projects/<slug>/<id>.jsonl` transcripts, sub-agent
// transcripts under `<id>/subagents/`, and one `history.jsonl` line per prompt.

const VERSION = '2.1.197';
const iso = (ms: number) => new Date(ms).toISOString();
const uuid = () => crypto.randomUUID();

function usage() {
	return {input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 5, service_tier: 'standard'};
}

/**
 * A main transcript in the shape Claude Code 2.1.197 writes (samples/claude). `entrypoint`: the
 * samples were recorded from `claude -p` (`sdk-cli`, headless); the demo's are `cli`, typed by a
 * person, so the dashboard's text search lists them.
 */
export function claudeTranscript(id: string, cwd: string, createdAt: number, prompt: string, extra: readonly object[] = [], entrypoint = 'sdk-cli'): string {
	const promptId = uuid();
	const u1 = uuid();
	const u2 = uuid();
	const common = {userType: 'external', entrypoint, cwd, sessionId: id, version: VERSION, gitBranch: 'master'};
	return jsonl([
		{type: 'queue-operation', operation: 'enqueue', timestamp: iso(createdAt), sessionId: id, content: prompt},
		{type: 'queue-operation', operation: 'dequeue', timestamp: iso(createdAt + 1), sessionId: id},
		{
			parentUuid: null,
			isSidechain: false,
			promptId,
			type: 'user',
			message: {role: 'user', content: prompt},
			uuid: u1,
			timestamp: iso(createdAt + 150),
			permissionMode: 'default',
			promptSource: 'sdk',
			...common,
		},
		{
			parentUuid: u1,
			isSidechain: false,
			message: {
				id: 'msg_fake1',
				type: 'message',
				role: 'assistant',
				model: 'claude-opus-4-8',
				content: [{type: 'text', text: 'Hello from the fake model.'}],
				stop_reason: 'end_turn',
				stop_sequence: null,
				usage: usage(),
			},
			type: 'assistant',
			uuid: u2,
			timestamp: iso(createdAt + 230),
			...common,
		},
		...extra,
		{type: 'last-prompt', lastPrompt: prompt, leafUuid: u2, sessionId: id},
	]);
}

/** A sub-agent (sidechain) transcript: records carry the parent's sessionId and the agent's own id. */
export function claudeSubagentTranscript(parentId: string, agentId: string, cwd: string, at: number): string {
	const u1 = uuid();
	const common = {userType: 'external', entrypoint: 'sdk-cli', cwd, sessionId: parentId, version: VERSION, gitBranch: 'master'};
	return jsonl([
		{
			parentUuid: null,
			isSidechain: true,
			promptId: uuid(),
			agentId,
			type: 'user',
			message: {role: 'user', content: 'Say hello from the subagent.'},
			uuid: u1,
			timestamp: iso(at),
			...common,
		},
		{
			parentUuid: u1,
			isSidechain: true,
			agentId,
			message: {
				id: 'msg_fake5',
				type: 'message',
				role: 'assistant',
				model: 'claude-opus-4-8',
				content: [{type: 'text', text: 'Hello from the fake model.'}],
				stop_reason: 'end_turn',
				stop_sequence: null,
				usage: usage(),
			},
			attributionAgent: 'general-purpose',
			type: 'assistant',
			uuid: uuid(),
			timestamp: iso(at + 20),
			...common,
		},
	]);
}

/** One `history.jsonl` line: the prompt as typed, its project and session, and a pasted-content ref. */
export function claudeHistoryLine(sessionId: string, project: string, display: string, at: number, pasteHash?: string): string {
	const pastedContents = pasteHash ? {'1': {id: 1, type: 'text', contentHash: pasteHash}} : {};
	return `${JSON.stringify({display, pastedContents, timestamp: at, project, sessionId})}\n`;
}
