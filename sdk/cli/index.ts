export { main, USAGE } from './main.js';
export type { CliDeps, CliIo } from './main.js';
export { parseArgs, parseList, parsePort, UsageError } from './args.js';
export type { FlagSpec, ParsedArgs } from './args.js';
export { DEFAULT_HOST, DEFAULT_ORG, DEFAULT_PORT, describeServing, parseServeArgs, SERVE_USAGE, serveWorld, worldNameFromDir } from './serve.js';
export type { ServeDeps, ServeOptions, ServingWorld } from './serve.js';
export { ATTACH_USAGE, parseAttachArgs, runAttach } from './attach.js';
export type { AttachDeps, AttachOptions, StartStreams, StreamListeners } from './attach.js';
