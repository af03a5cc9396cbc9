export { CLI_VERSION, root } from "./Commands.ts"
export { ExitCode, exitCodesHelp } from "./Exit.ts"
