import {stubAdapter} from './stub.js';

export const claudeAdapter = stubAdapter({
	id: 'claude',
	label: 'Claude Code',
	idPattern: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
	processNames: ['claude', 'claude-code'],
	exitInput: {text: '/exit', keys: ['Enter']},
	resumeArgv: id => ['claude', '--resume', id],
});
