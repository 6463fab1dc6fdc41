import {stubAdapter} from './stub.js';

export const grokAdapter = stubAdapter({
	id: 'grok',
	label: 'Grok',
	idPattern: /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{12})$/,
	processNames: ['grok'],
	exitInput: {text: '/exit', keys: ['Enter']},
	resumeArgv: id => ['grok', '--resume', id],
});
