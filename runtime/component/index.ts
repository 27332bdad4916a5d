/** Component twins (WebAssembly components of the kit:twin world): Node's barrel. */
export { loadComponentTwin, type ComponentLoadOptions } from './load.js';
export { loadComponentIntoLane } from './lane-load.js';
export { DEFAULT_COMPONENT_MEMORY_BYTES, type ComponentCode } from './types.js';
export { ALLOWED_WASI, refusedImport } from './wasi.js';
