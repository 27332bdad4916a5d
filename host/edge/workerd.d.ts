/**
 * The few workerd types the edge variant uses (its Durable Objects and their storage), declared
 * here rather than taken from @cloudflare/workers-types, whose globals would clash with Node's
 * in this repository's one TypeScript program.
 */
declare module 'cloudflare:workers' {
  export abstract class DurableObject<Env = unknown> {
    protected readonly ctx: DurableObjectState;
    protected readonly env: Env;
    constructor(ctx: DurableObjectState, env: Env);
  }

  export interface SqlCursor<T = Record<string, unknown>> extends Iterable<T> {
    toArray(): T[];
    one(): T;
    readonly rowsWritten: number;
  }

  export interface SqlStorage {
    exec<T = Record<string, unknown>>(query: string, ...bindings: unknown[]): SqlCursor<T>;
    readonly databaseSize: number;
  }

  export interface DurableObjectStorage {
    readonly sql: SqlStorage;
    transactionSync<T>(fn: () => T): T;
    getAlarm(): Promise<number | null>;
    setAlarm(scheduledTime: number | Date): Promise<void>;
    deleteAlarm(): Promise<void>;
    deleteAll(): Promise<void>;
  }

  export interface DurableObjectId {
    toString(): string;
    readonly name?: string;
  }

  export interface DurableObjectState {
    readonly id: DurableObjectId;
    readonly storage: DurableObjectStorage;
    blockConcurrencyWhile<T>(fn: () => Promise<T>): Promise<T>;
    waitUntil(promise: Promise<unknown>): void;
    acceptWebSocket(ws: WebSocket, tags?: string[]): void;
    getWebSockets(tag?: string): WebSocket[];
  }

  /** A stub: the object's public methods, each answering a promise (workerd's RPC). */
  export type DurableObjectStub<T> = {
    [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
  } & { fetch(request: Request): Promise<Response> };

  export interface DurableObjectNamespace<T> {
    idFromName(name: string): DurableObjectId;
    get(id: DurableObjectId): DurableObjectStub<T>;
  }

  export class WebSocketPair {
    0: WebSocket;
    1: WebSocket;
  }
}
