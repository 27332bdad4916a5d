/**
 * The durable-write floor of the HTTP load test (row `uws-durable`): the least a durable
 * create costs on twinkit's own stack, with none of twinkit in it. A uWS server that, for
 * each POST, parses the form body, makes a Stripe-shaped customer and its `customer.created`
 * event, stages a log entry holding both and the customer's head key, writes each event-loop
 * turn's writes in one LMDB transaction (msgpack values, ordered-binary keys, as the engine
 * stores them), and answers them after the next sync, one sync at a time shared by every
 * commit made before it started: the group commit the engine does, and nothing else. No
 * credential, no routing, no sandbox, no validation, no counts or indexes.
 *
 * `stripe-post` against this row says how much of a durable create is twinkit's engine and
 * twin, and how much the storage and HTTP would cost any server that keeps the same promise.
 *
 *   node dist/bench/http/durable-floor.js <port> <dir>   # prints `ready <port>`; stops on SIGTERM/SIGINT
 */
import { join } from 'node:path';
import { open } from 'lmdb';
import * as uWS from 'uWebSockets.js';

const [portArg, dir] = process.argv.slice(2);
if (dir === undefined) throw new Error('usage: durable-floor.js <port> <dir>');
const db = open<unknown, (string | number)[]>({ path: join(dir, 'floor.mdb'), encoding: 'msgpack', sharedStructuresKey: Symbol.for('structures'), noSync: true, cache: false });
const dbSync = db as unknown as { sync(callback: (error?: unknown) => void): void };

interface Waiting {
  res: uWS.HttpResponse;
  body: string;
  aborted: boolean;
}
let staged: [(string | number)[], unknown][] = [];
let answering: Waiting[] = [];
/** Committed, waiting for the next sync (at most one runs at a time, as the engine's). */
let committed: Waiting[] = [];
let syncing = false;
let position = 0;

/** Ends the turn: one transaction for its writes; its requests wait for the next sync. */
function commitTurn(): void {
  const writes = staged;
  staged = [];
  db.transactionSync(() => {
    for (const [key, value] of writes) void db.put(key, value);
  });
  for (const w of answering) committed.push(w);
  answering = [];
  if (!syncing) syncCommitted();
}

/** One sync covers every commit made before it started; those made meanwhile share the next. */
function syncCommitted(): void {
  const waiting = committed;
  committed = [];
  syncing = true;
  dbSync.sync((error) => {
    syncing = false;
    for (const w of waiting) {
      if (w.aborted) continue;
      w.res.cork(() => {
        if (error) w.res.writeStatus('500 Internal Server Error').end();
        else w.res.writeHeader('content-type', 'application/json').end(w.body);
      });
    }
    if (committed.length > 0) syncCommitted();
  });
}

function create(form: string): string {
  const params = new URLSearchParams(form);
  const at = Math.floor(Date.now() / 1000);
  const n = ++position;
  const id = `cus_${n.toString(36).padStart(14, '0')}`;
  const customer = {
    id,
    object: 'customer',
    address: null,
    balance: 0,
    created: at,
    currency: null,
    default_source: null,
    delinquent: false,
    description: params.get('description'),
    discount: null,
    email: params.get('email'),
    invoice_prefix: id.slice(-8).toUpperCase(),
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
    livemode: false,
    metadata: {},
    name: params.get('name'),
    next_invoice_sequence: 1,
    phone: params.get('phone'),
    preferred_locales: [],
    shipping: null,
    tax_exempt: 'none',
    test_clock: null,
  };
  const event = {
    id: `evt_${n.toString(36).padStart(24, '0')}`,
    object: 'event',
    api_version: '2025-03-31.basil',
    created: at,
    data: { object: customer },
    livemode: false,
    pending_webhooks: 0,
    request: { id: `req_${n}`, idempotency_key: null },
    type: 'customer.created',
  };
  staged.push([['w', 'stripe', 'log', n], { at, customer, event }]);
  staged.push([['w', 'stripe', 'rec', 'customer', id], [n, customer]]);
  return JSON.stringify(customer);
}

const app = uWS.App().post('/*', (res) => {
  const waiting: Waiting = { res, body: '', aborted: false };
  res.onAborted(() => {
    waiting.aborted = true;
  });
  const chunks: Buffer[] = [];
  res.onData((chunk, last) => {
    chunks.push(Buffer.from(chunk.slice(0)));
    if (!last) return;
    waiting.body = create(Buffer.concat(chunks).toString('latin1'));
    if (answering.length === 0) setImmediate(commitTurn);
    answering.push(waiting);
  });
});
app.listen('127.0.0.1', Number(portArg ?? '0'), (socket) => {
  if (socket === false) throw new Error(`cannot listen on ${portArg}`);
  console.log(`ready ${uWS.us_socket_local_port(socket)}`);
  const quit = (): void => {
    uWS.us_listen_socket_close(socket);
    app.close();
    void db.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', quit);
  process.once('SIGINT', quit);
});
