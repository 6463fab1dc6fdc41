import {stubAdapter} from './stub.js';

export const codexAdapter = stubAdapter({
	id: 'codex',
	label: 'Codex CLI',
	idPattern: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
	processNames: ['codex'],
	exitInput: {text: '/quit', keys: ['Enter']},
	resumeArgv: id => ['codex', 'resume', id],
});
