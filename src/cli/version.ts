// The package version lives in src/system (the world keys the parse memo by it); the CLI prints it.
export {packageVersion} from '../system/version.js';
