/**
 * A stand-in model for the real agent CLIs: a small HTTP server on 127.0.0.1 (port 0) that
 * speaks just enough of four wire formats for a real TUI to hold a conversation offline.
 *
 * - Anthropic messages (`POST /v1/messages`, SSE or plain; `count_tokens`; `HEAD /`): claude.
 * - OpenAI responses (`POST /v1/responses`, SSE): codex.
 * - OpenAI chat completions (`POST /v1/chat/completions`, SSE or plain; `GET /v1/models`): opencode,
 *   grok (which also asks, under its own model ids, for a title and a next-prompt suggestion) and
 *   hermes (which also asks `GET /api/v1/models`; its context window comes from its config).
 * - Gemini `:generateContent`, `:streamGenerateContent?alt=sse`, `:countTokens`: gemini. A request
 *   in JSON mode (gemini's router/classifier) is answered with a value built from its schema:
 *   a plain-text answer there makes gemini retry with backoff for minutes.
 *
 * What the model does is chosen by words in the last user turn (never in a tool result):
 * - {@link SLOW_REPLY}: answer after `slowMs` (default 20 s), so the agent stays "working".
 * - {@link SPAWN_SUBAGENT}: call the agent's own sub-agent tool (claude `Agent`/`Task`, codex
 *   `spawn_agent` in its namespace, opencode `task`, grok `spawn_subagent`, gemini `invoke_agent`,
 *   hermes `delegate_task`; inside a gemini
 *   sub-agent the model then calls `complete_task`).
 * - {@link RUN_SHELL}: call the agent's own shell tool with `shellCommand`. The default writes a
 *   file (`> …`), which makes claude and gemini ask for approval; codex asks because the call asks
 *   for `require_escalated`; opencode asks only when `shellWorkdir` is outside its project; hermes
 *   (`terminal`) asks only for a command it calls dangerous: {@link HERMES_SHELL_COMMAND}.
 * - anything else: a plain text answer, `reply`.
 *
 * Every request is recorded (method, path, query, headers, raw and parsed body, the last user
 * text) so a test can assert what an agent sent, e.g. that a draft was never sent as a prompt.
 */
import http from 'node:http';
import type {AddressInfo} from 'node:net';

export const SLOW_REPLY = 'SLOW_REPLY';
export const SPAWN_SUBAGENT = 'SPAWN_SUBAGENT';
export const RUN_SHELL = 'RUN_SHELL';
/** What the model answers in plain text unless `reply` says otherwise. */
export const DEFAULT_REPLY = 'Hello from the stand-in model.';
/** The task a spawned sub-agent is given. */
export const SUBAGENT_TASK = 'Say hello from the sub-agent.';
/** Writes a file, so claude and gemini ask before running it. */
export const DEFAULT_SHELL_COMMAND = 'echo hello-from-tool > hello-from-tool.txt';
/**
 * hermes asks only before a command its patterns call dangerous (tools/approval.py), and a file
 * redirect is not one; making the file world-writable is, and harms nothing here.
 */
export const HERMES_SHELL_COMMAND = `${DEFAULT_SHELL_COMMAND} && chmod 666 hello-from-tool.txt`;

export interface ModelOptions {
	/** How long a {@link SLOW_REPLY} turn waits before its answer (default 20 000 ms). */
	readonly slowMs?: number;
	/** The command a {@link RUN_SHELL} turn asks the agent to run. */
	readonly shellCommand?: string;
	/** The `workdir` a shell call names, when the tool takes one (opencode asks outside its project). */
	readonly shellWorkdir?: string;
	/** The plain answer. */
	readonly reply?: string;
}

export interface ModelRequest {
	readonly at: number;
	readonly method: string;
	readonly path: string;
	/** The query string, with its `?`, or ''. */
	readonly query: string;
	readonly headers: Readonly<Record<string, string>>;
	/** The body as sent. */
	readonly raw: string;
	/** The body parsed as JSON, or undefined when it was not JSON. */
	readonly body: unknown;
	/** The text of the last user turn ('' when that turn is a tool result or there is none). */
	readonly lastUserText: string;
	/** What the model did: 'text', 'json', 'subagent', 'shell', 'complete-task', 'meta' or 'unknown'. */
	readonly answer: string;
}

export interface Model {
	/** `http://127.0.0.1:<port>` (no trailing slash, no `/v1`). */
	readonly url: string;
	readonly port: number;
	/** Every request so far, oldest first (a copy). */
	requests(): ModelRequest[];
	/** Change options for the requests that come next (e.g. a `shellWorkdir` inside a world made later). */
	configure(changes: ModelOptions): void;
	/** Stop listening, drop open connections and pending slow answers. */
	close(): Promise<void>;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Text of a message's content in any of the four shapes (string, blocks with `text`, gemini parts). */
function textOf(content: unknown): string {
	if (typeof content === 'string') return content;
	return list(content)
		.map(block => (typeof block === 'string' ? block : isObject(block) ? str(block['text']) : ''))
		.join('\n');
}

/** The last conversational turn: system and developer entries some CLIs append are skipped. */
function lastTurn(turns: unknown): Json | undefined {
	const all = list(turns).filter(isObject);
	for (let i = all.length - 1; i >= 0; i--) {
		const turn = all[i] as Json;
		if (!/^(system|developer)$/i.test(str(turn['role']))) return turn;
	}
	return undefined;
}

function isToolResult(turn: Json): boolean {
	if (turn['role'] === 'tool' || turn['type'] === 'function_call_output') return true;
	const parts = list(turn['content'] ?? turn['parts']);
	return parts.some(p => isObject(p) && (p['type'] === 'tool_result' || 'functionResponse' in p));
}

/** The user's words in the last turn, '' for a tool result (the model then just answers). */
export function lastUserText(body: unknown): string {
	if (!isObject(body)) return '';
	const turn = lastTurn(body['messages'] ?? body['input'] ?? body['contents']);
	if (!turn || isToolResult(turn)) return '';
	const role = str(turn['role']);
	if (role !== '' && role !== 'user') return '';
	return textOf(turn['content'] ?? turn['parts']);
}

/** The smallest value a JSON schema accepts (gemini's schemas use upper-case OpenAPI types). */
export function valueForSchema(schema: unknown, depth = 0): unknown {
	if (!isObject(schema) || depth > 8) return null;
	const choices = list(schema['enum']);
	if (choices.length > 0) return choices[0];
	const declared = Array.isArray(schema['type']) ? schema['type'][0] : schema['type'];
	const type = str(declared ?? (isObject(schema['properties']) ? 'object' : 'string')).toLowerCase();
	switch (type) {
		case 'object': {
			const value: Json = {};
			for (const [key, sub] of Object.entries(isObject(schema['properties']) ? schema['properties'] : {})) value[key] = valueForSchema(sub, depth + 1);
			return value;
		}
		case 'array':
			return [];
		case 'integer':
		case 'number':
			return typeof schema['minimum'] === 'number' ? schema['minimum'] : 1;
		case 'boolean':
			return false;
		default:
			return 'stand-in';
	}
}

const SHELL_TOOLS = new Set(['Bash', 'exec_command', 'shell_command', 'shell', 'bash', 'run_shell_command', 'run_terminal_command', 'terminal']);

/** Arguments for a shell tool, shaped by its parameter schema (`cmd` or `command`, string or argv). */
function shellArguments(schema: unknown, options: ModelOptions, tool = ''): Json {
	const props = isObject(schema) && isObject(schema['properties']) ? schema['properties'] : {};
	const command = options.shellCommand ?? (tool === 'terminal' ? HERMES_SHELL_COMMAND : DEFAULT_SHELL_COMMAND);
	const args: Json = {};
	if ('cmd' in props) args['cmd'] = command;
	else args['command'] = isObject(props['command']) && props['command']['type'] === 'array' ? ['bash', '-lc', command] : command;
	if ('description' in props) args['description'] = 'Write a greeting to a file';
	if (options.shellWorkdir && 'workdir' in props) args['workdir'] = options.shellWorkdir;
	// codex runs a command in its sandbox without asking unless the call asks to leave it.
	const permissions = isObject(props['sandbox_permissions']) ? list(props['sandbox_permissions']['enum']) : [];
	if (permissions.includes('require_escalated')) {
		args['sandbox_permissions'] = 'require_escalated';
		args['justification'] = `May I run \`${command}\` outside the sandbox?`;
	}
	return args;
}

interface Writer {
	readonly res: http.ServerResponse;
}

function sendJson({res}: Writer, status: number, value: unknown): void {
	const text = JSON.stringify(value);
	res.writeHead(status, {'content-type': 'application/json', 'content-length': Buffer.byteLength(text)});
	res.end(text);
}

/** One SSE stream: `event:` lines only when the format names its events (anthropic, responses). */
function sendEvents({res}: Writer, events: ReadonlyArray<readonly [string | null, unknown]>): void {
	res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive'});
	for (const [name, data] of events) {
		if (name) res.write(`event: ${name}\n`);
		res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
	}
	res.end();
}

interface Turn {
	readonly body: Json;
	readonly text: string;
	readonly serial: number;
	readonly options: ModelOptions;
}

const tools = (body: Json): Json[] => list(body['tools']).filter(isObject);

function anthropic(w: Writer, turn: Turn): string {
	const {body, text, serial, options} = turn;
	const id = `msg_standin_${serial}`;
	const model = str(body['model']) || 'stand-in';
	const usage = {input_tokens: 12, output_tokens: 6, cache_creation_input_tokens: 0, cache_read_input_tokens: 0};
	const agentTool = tools(body).find(t => t['name'] === 'Agent' || t['name'] === 'Task');
	const shellTool = tools(body).find(t => SHELL_TOOLS.has(str(t['name'])));
	let block: Json;
	let answer: string;
	if (agentTool && text.includes(SPAWN_SUBAGENT)) {
		block = {
			type: 'tool_use',
			id: `toolu_standin_${serial}`,
			name: agentTool['name'],
			input: {description: 'stand-in sub-task', prompt: SUBAGENT_TASK, subagent_type: 'general-purpose'},
		};
		answer = 'subagent';
	} else if (shellTool && text.includes(RUN_SHELL)) {
		block = {type: 'tool_use', id: `toolu_standin_${serial}`, name: shellTool['name'], input: shellArguments(shellTool['input_schema'], options)};
		answer = 'shell';
	} else {
		block = {type: 'text', text: options.reply ?? DEFAULT_REPLY};
		answer = 'text';
	}
	const stopReason = block['type'] === 'tool_use' ? 'tool_use' : 'end_turn';
	if (body['stream'] !== true) {
		sendJson(w, 200, {id, type: 'message', role: 'assistant', model, content: [block], stop_reason: stopReason, stop_sequence: null, usage});
		return answer;
	}
	const opening = block['type'] === 'tool_use' ? {...block, input: {}} : {type: 'text', text: ''};
	const delta =
		block['type'] === 'tool_use' ? {type: 'input_json_delta', partial_json: JSON.stringify(block['input'])} : {type: 'text_delta', text: block['text']};
	sendEvents(w, [
		[
			'message_start',
			{
				type: 'message_start',
				message: {id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: {...usage, output_tokens: 1}},
			},
		],
		['content_block_start', {type: 'content_block_start', index: 0, content_block: opening}],
		['ping', {type: 'ping'}],
		['content_block_delta', {type: 'content_block_delta', index: 0, delta}],
		['content_block_stop', {type: 'content_block_stop', index: 0}],
		['message_delta', {type: 'message_delta', delta: {stop_reason: stopReason, stop_sequence: null}, usage: {output_tokens: 6}}],
		['message_stop', {type: 'message_stop'}],
	]);
	return answer;
}

function responses(w: Writer, turn: Turn): string {
	const {body, text, serial, options} = turn;
	const model = str(body['model']) || 'stand-in';
	const base = {
		id: `resp_standin_${serial}`,
		object: 'response',
		created_at: Math.floor(Date.now() / 1000),
		model,
		status: 'in_progress',
		output: [] as unknown[],
	};
	const usage = {input_tokens: 12, input_tokens_details: {cached_tokens: 0}, output_tokens: 6, output_tokens_details: {reasoning_tokens: 0}, total_tokens: 18};
	const namespace = tools(body).find(t => t['type'] === 'namespace' && list(t['tools']).some(x => isObject(x) && x['name'] === 'spawn_agent'));
	const flatSpawn = tools(body).find(t => t['name'] === 'spawn_agent');
	const shellTool = tools(body).find(t => t['type'] === 'function' && SHELL_TOOLS.has(str(t['name'])));
	let call: Json | undefined;
	let answer = 'text';
	if ((namespace || flatSpawn) && text.includes(SPAWN_SUBAGENT)) {
		call = {
			type: 'function_call',
			id: `fc_standin_${serial}`,
			call_id: `call_standin_${serial}`,
			name: 'spawn_agent',
			arguments: JSON.stringify({message: SUBAGENT_TASK}),
			status: 'completed',
		};
		// codex routes a call to a namespaced tool only when the item names the namespace.
		if (namespace) call['namespace'] = namespace['name'];
		answer = 'subagent';
	} else if (shellTool && text.includes(RUN_SHELL)) {
		call = {
			type: 'function_call',
			id: `fc_standin_${serial}`,
			call_id: `call_standin_${serial}`,
			name: shellTool['name'],
			arguments: JSON.stringify(shellArguments(shellTool['parameters'], options)),
			status: 'completed',
		};
		answer = 'shell';
	}
	let seq = 0;
	const event = (type: string, fields: Json): readonly [string, unknown] => [type, {type, sequence_number: seq++, ...fields}];
	if (call) {
		sendEvents(w, [
			event('response.created', {response: base}),
			event('response.output_item.added', {output_index: 0, item: {...call, arguments: '', status: 'in_progress'}}),
			event('response.function_call_arguments.delta', {item_id: call['id'], output_index: 0, delta: call['arguments']}),
			event('response.function_call_arguments.done', {item_id: call['id'], output_index: 0, arguments: call['arguments']}),
			event('response.output_item.done', {output_index: 0, item: call}),
			event('response.completed', {response: {...base, status: 'completed', output: [call], usage}}),
		]);
		return answer;
	}
	const reply = options.reply ?? DEFAULT_REPLY;
	const itemId = `msg_standin_${serial}`;
	const item = {type: 'message', id: itemId, status: 'completed', role: 'assistant', content: [{type: 'output_text', text: reply, annotations: []}]};
	if (body['stream'] === false) {
		sendJson(w, 200, {...base, status: 'completed', output: [item], usage});
		return answer;
	}
	const part = {type: 'output_text', text: '', annotations: []};
	const where = {item_id: itemId, output_index: 0, content_index: 0};
	sendEvents(w, [
		event('response.created', {response: base}),
		event('response.in_progress', {response: base}),
		event('response.output_item.added', {output_index: 0, item: {...item, status: 'in_progress', content: []}}),
		event('response.content_part.added', {...where, part}),
		event('response.output_text.delta', {...where, delta: reply}),
		event('response.output_text.done', {...where, text: reply}),
		event('response.content_part.done', {...where, part: {...part, text: reply}}),
		event('response.output_item.done', {output_index: 0, item}),
		event('response.completed', {response: {...base, status: 'completed', output: [item], usage}}),
	]);
	return answer;
}

function chatCompletions(w: Writer, turn: Turn): string {
	const {body, text, serial, options} = turn;
	const id = `chatcmpl-standin-${serial}`;
	const model = str(body['model']) || 'stand-in';
	const created = Math.floor(Date.now() / 1000);
	const usage = {prompt_tokens: 12, completion_tokens: 6, total_tokens: 18};
	const fn = (t: Json): Json => (isObject(t['function']) ? t['function'] : {});
	// opencode's `task`, Grok Build's `spawn_subagent` (in the foreground, so the turn waits for it).
	const taskTool = tools(body).find(t => fn(t)['name'] === 'task' || fn(t)['name'] === 'spawn_subagent');
	const delegateTool = tools(body).find(t => fn(t)['name'] === 'delegate_task');
	const shellTool = tools(body).find(t => SHELL_TOOLS.has(str(fn(t)['name'])));
	let call: Json | undefined;
	let answer = 'text';
	if (taskTool && text.includes(SPAWN_SUBAGENT)) {
		const args =
			fn(taskTool)['name'] === 'task'
				? {description: 'stand-in sub-task', prompt: SUBAGENT_TASK, subagent_type: 'general'}
				: {description: 'stand-in sub-task', prompt: SUBAGENT_TASK, background: false};
		call = {index: 0, id: `call_standin_${serial}`, type: 'function', function: {name: fn(taskTool)['name'], arguments: JSON.stringify(args)}};
		answer = 'subagent';
	} else if (delegateTool && text.includes(SPAWN_SUBAGENT)) {
		// hermes: a sub-agent runs the `goal` as its own task.
		call = {index: 0, id: `call_standin_${serial}`, type: 'function', function: {name: 'delegate_task', arguments: JSON.stringify({goal: SUBAGENT_TASK})}};
		answer = 'subagent';
	} else if (shellTool && text.includes(RUN_SHELL)) {
		call = {
			index: 0,
			id: `call_standin_${serial}`,
			type: 'function',
			function: {name: fn(shellTool)['name'], arguments: JSON.stringify(shellArguments(fn(shellTool)['parameters'], options, str(fn(shellTool)['name'])))},
		};
		answer = 'shell';
	}
	const reply = options.reply ?? DEFAULT_REPLY;
	if (body['stream'] !== true) {
		const message = call ? {role: 'assistant', content: null, tool_calls: [call]} : {role: 'assistant', content: reply};
		sendJson(w, 200, {id, object: 'chat.completion', created, model, choices: [{index: 0, message, finish_reason: call ? 'tool_calls' : 'stop'}], usage});
		return answer;
	}
	const chunk = (delta: Json, finish: string | null): readonly [null, unknown] => [
		null,
		{id, object: 'chat.completion.chunk', created, model, choices: [{index: 0, delta, finish_reason: finish}]},
	];
	const body1 = call
		? [chunk({role: 'assistant', content: null, tool_calls: [call]}, null), chunk({}, 'tool_calls')]
		: [chunk({role: 'assistant', content: ''}, null), chunk({content: reply}, null), chunk({}, 'stop')];
	sendEvents(w, [...body1, [null, {id, object: 'chat.completion.chunk', created, model, choices: [], usage}], [null, '[DONE]']]);
	return answer;
}

/** The JSON schema a gemini request asks its answer to follow, if it is in JSON mode. */
function geminiSchema(body: Json): {readonly json: boolean; readonly schema: unknown} {
	const config = isObject(body['generationConfig']) ? body['generationConfig'] : isObject(body['config']) ? body['config'] : {};
	const schema = config['responseJsonSchema'] ?? config['responseSchema'];
	return {json: config['responseMimeType'] === 'application/json' || schema !== undefined, schema};
}

function gemini(w: Writer, turn: Turn, path: string): string {
	const {body, text, serial, options} = turn;
	if (path.includes(':countTokens')) {
		sendJson(w, 200, {totalTokens: 12});
		return 'meta';
	}
	const declarations = list(body['tools'])
		.flatMap(t => (isObject(t) ? list(t['functionDeclarations']) : []))
		.filter(isObject);
	const named = (name: string) => declarations.find(d => d['name'] === name);
	const paramsOf = (d: Json) => d['parametersJsonSchema'] ?? d['parameters'] ?? {type: 'object'};
	const {json, schema} = geminiSchema(body);
	const complete = named('complete_task');
	const invoke = named('invoke_agent');
	const shell = declarations.find(d => SHELL_TOOLS.has(str(d['name'])));
	let part: Json;
	let answer: string;
	if (json) {
		part = {text: JSON.stringify(valueForSchema(schema ?? {type: 'object'}))};
		answer = 'json';
	} else if (complete) {
		// Inside a gemini sub-agent: the only way it finishes is its completion tool.
		part = {functionCall: {name: 'complete_task', args: valueForSchema(paramsOf(complete)) ?? {}}};
		answer = 'complete-task';
	} else if (invoke && text.includes(SPAWN_SUBAGENT)) {
		part = {functionCall: {name: 'invoke_agent', args: {agent_name: 'codebase_investigator', prompt: SUBAGENT_TASK}}};
		answer = 'subagent';
	} else if (shell && text.includes(RUN_SHELL)) {
		part = {functionCall: {name: shell['name'], args: shellArguments(paramsOf(shell), options)}};
		answer = 'shell';
	} else {
		part = {text: options.reply ?? DEFAULT_REPLY};
		answer = 'text';
	}
	const payload = {
		candidates: [{content: {role: 'model', parts: [part]}, finishReason: 'STOP', index: 0}],
		usageMetadata: {promptTokenCount: 12, candidatesTokenCount: 6, totalTokenCount: 18},
		modelVersion: 'stand-in',
		responseId: `standin_${serial}`,
	};
	if (path.includes(':streamGenerateContent')) sendEvents(w, [[null, payload]]);
	else sendJson(w, 200, payload);
	return answer;
}

function readBody(req: http.IncomingMessage): Promise<string> {
	return new Promise(resolve => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
		req.on('error', () => resolve(''));
	});
}

function parseJson(raw: string): unknown {
	try {
		return raw ? (JSON.parse(raw) as unknown) : undefined;
	} catch {
		return undefined;
	}
}

/** Answer one request; returns what the model did. */
function route(w: Writer, method: string, path: string, turn: Turn): string {
	if (method === 'HEAD' || (method === 'GET' && path === '/')) {
		w.res.writeHead(200);
		w.res.end();
		return 'meta';
	}
	if (method === 'GET' && path.endsWith('/models')) {
		sendJson(w, 200, {object: 'list', data: [{id: 'stand-in', object: 'model', created: 0, owned_by: 'mam-tui'}], models: []});
		return 'meta';
	}
	if (method === 'POST' && path.endsWith('/messages/count_tokens')) {
		sendJson(w, 200, {input_tokens: 12});
		return 'meta';
	}
	if (method === 'POST' && path.endsWith('/messages')) return anthropic(w, turn);
	if (method === 'POST' && path.endsWith('/responses')) return responses(w, turn);
	if (method === 'POST' && path.endsWith('/chat/completions')) return chatCompletions(w, turn);
	if (method === 'POST' && /\/models\/[^/]+:(generateContent|streamGenerateContent|countTokens)$/.test(path)) return gemini(w, turn, path);
	sendJson(w, 404, {error: {type: 'not_found', message: `stand-in model: no route for ${method} ${path}`}});
	return 'unknown';
}

/** Start the stand-in model on 127.0.0.1 with a free port. */
export async function startModel(initial: ModelOptions = {}): Promise<Model> {
	let options: ModelOptions = {...initial};
	const log: ModelRequest[] = [];
	const timers = new Set<NodeJS.Timeout>();
	let serial = 0;
	let closed = false;
	const wait = (ms: number) =>
		new Promise<void>(resolve => {
			const timer = setTimeout(() => {
				timers.delete(timer);
				resolve();
			}, ms);
			timers.add(timer);
		});
	const server = http.createServer((req, res) => {
		void (async () => {
			const raw = await readBody(req);
			const url = new URL(req.url ?? '/', 'http://127.0.0.1');
			const body = parseJson(raw);
			const json = isObject(body) ? body : {};
			const text = lastUserText(body);
			const headers: Record<string, string> = {};
			for (const [key, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[key] = value;
			// Recorded on arrival, so a test sees a request even while its slow answer is pending.
			const index =
				log.push({at: Date.now(), method: req.method ?? '', path: url.pathname, query: url.search, headers, raw, body, lastUserText: text, answer: 'pending'}) -
				1;
			// A router call in JSON mode carries the prompt too; delaying it would double the wait.
			if (text.includes(SLOW_REPLY) && !geminiSchema(json).json) await wait(options.slowMs ?? 20_000);
			if (closed) return void res.destroy();
			let answer: string;
			try {
				answer = route({res}, req.method ?? 'GET', url.pathname, {body: json, text, serial: ++serial, options});
			} catch (error) {
				answer = `error: ${String(error)}`;
				if (!res.headersSent) sendJson({res}, 500, {error: {message: String(error)}});
				else res.end();
			}
			log[index] = {...(log[index] as ModelRequest), answer};
		})();
	});
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => resolve());
	});
	const port = (server.address() as AddressInfo).port;
	return {
		url: `http://127.0.0.1:${port}`,
		port,
		requests: () => [...log],
		configure: changes => {
			options = {...options, ...changes};
		},
		close: async () => {
			closed = true;
			for (const timer of timers) clearTimeout(timer);
			timers.clear();
			server.closeAllConnections();
			await new Promise<void>(resolve => server.close(() => resolve()));
		},
	};
}
