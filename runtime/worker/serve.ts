/**
 * The worker side of a `SupervisedWorker`: answers each call with the handler's result. The
 * handler decides the order: a synchronous handler answers calls one at a time, in order; an
 * async one may have many in progress.
 */
import { isMainThread, parentPort } from 'node:worker_threads';
import type { TransferListItem } from 'node:worker_threads';
import { TurnBatcher } from './batch.js';
import type { CallBatch, CallMessage, ReplyBatch, ReplyMessage } from './protocol.js';
import { toErrorBody } from './protocol.js';

export interface ServeOptions<Res> {
  /** Buffers of a response to transfer rather than copy. */
  transfer?: (response: Res) => TransferListItem[];
}

/** Serves `handler` to the `SupervisedWorker` that started this worker thread. */
export function serveInWorker<Req, Res>(handler: (req: Req) => Promise<Res> | Res, options?: ServeOptions<Res>): void {
  const port = parentPort;
  if (isMainThread || port === null) throw new TypeError('serveInWorker() runs inside a worker thread started by SupervisedWorker');
  // A reply that cannot be cloned (a function in a response or in an error's details) is
  // the handler's bug; answer the call with that rather than crash or go silent.
  const replies = new TurnBatcher<ReplyMessage>(
    () => port,
    (message, e) => port.postMessage([[message[0], 1, toErrorBody(new Error(`the reply could not be sent: ${e instanceof Error ? e.message : String(e)}`))]] satisfies ReplyBatch),
  );
  const post = (message: ReplyMessage, transfer?: readonly TransferListItem[]): void => replies.push(message, transfer);
  const answer = (id: number, response: Res): void => {
    let transfer: readonly TransferListItem[] | undefined;
    try {
      transfer = options?.transfer?.(response);
    } catch (e) {
      post([id, 1, toErrorBody(e)]);
      return;
    }
    post([id, 0, response], transfer);
  };
  const serve = ([id, request]: CallMessage): void => {
    let out: Promise<Res> | Res;
    try {
      out = handler(request as Req);
    } catch (e) {
      post([id, 1, toErrorBody(e)]);
      return;
    }
    if (isPromiseLike(out)) {
      out.then(
        (response) => answer(id, response),
        (e: unknown) => post([id, 1, toErrorBody(e)]),
      );
    } else {
      answer(id, out);
    }
  };
  port.on('message', (batch: CallBatch) => {
    for (const call of batch) serve(call);
  });
  port.postMessage(['ready'] satisfies ReplyBatch);
}

function isPromiseLike<T>(value: unknown): value is Promise<T> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
