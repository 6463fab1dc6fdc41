import {stubAdapter} from './stub.js';

export const opencodeAdapter = stubAdapter({
	id: 'opencode',
	label: 'opencode',
	idPattern: /^ses_[0-9a-f]{12}[0-9A-Za-z]{14}$/,
	processNames: ['opencode', 'opencode2'],
	exitInput: {text: '/exit', keys: ['Enter']},
	resumeArgv: id => ['opencode', '--session', id],
});
