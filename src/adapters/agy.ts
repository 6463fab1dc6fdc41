import {stubAdapter} from './stub.js';

export const agyAdapter = stubAdapter({
	id: 'agy',
	label: 'Antigravity CLI',
	idPattern: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
	processNames: ['agy', 'antigravity'],
	exitInput: {text: '/exit', keys: ['Enter']},
	resumeArgv: id => ['agy', '--conversation', id],
});
