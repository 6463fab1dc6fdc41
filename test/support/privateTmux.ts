// Moved to test/helpers/tmux.ts; the bench still imports it from here.
export {isolatedEnv, privateTmux, type PrivateTmux, type TmuxRun} from '../helpers/tmux.js';
