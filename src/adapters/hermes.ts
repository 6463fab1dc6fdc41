import {stubAdapter} from './stub.js';

export const hermesAdapter = stubAdapter({
	id: 'hermes',
	label: 'Hermes Agent',
	idPattern: /^\d{8}_\d{6}_[0-9a-f]{6,8}$/,
	processNames: ['hermes'],
	exitInput: {text: '/quit', keys: ['Enter']},
	resumeArgv: id => ['hermes', '--resume', id],
});
