import {stubAdapter} from './stub.js';

export const geminiAdapter = stubAdapter({
	id: 'gemini',
	label: 'Gemini CLI',
	idPattern: /^[A-Za-z0-9_-]+$/,
	processNames: ['gemini'],
	exitInput: {text: '/quit', keys: ['Enter']},
	resumeArgv: id => ['gemini', '--resume', id],
});
