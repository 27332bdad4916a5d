/** Worlds in worker threads under a watchdog: the main side and the worker side. */
export { SupervisedWorker, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_WORKER_STACK_MB } from './supervised.js';
export type { SupervisedWorkerOptions } from './supervised.js';
export { serveInWorker } from './serve.js';
export type { ServeOptions } from './serve.js';
export { compiledScript } from './script.js';
