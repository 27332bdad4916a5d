/** What the host benches use of autocannon 9 (it ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface AutocannonOptions {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
  }

  interface AutocannonResult {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    requests: { average: number; total: number };
    latency: { p50: number; p99: number; max: number };
  }

  /** Emits 'response' (client, statusCode, resBytes, responseTime in ms) per answer; resolves with the result. */
  interface AutocannonInstance extends EventEmitter, PromiseLike<AutocannonResult> {}

  function autocannon(options: AutocannonOptions): AutocannonInstance;
  export default autocannon;
}
