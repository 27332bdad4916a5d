/**
 * The worker of a `SandboxLane`: one `WorldSandbox`, operations one at a time. A guest's host
 * call is posted to the main thread, and this thread waits (Atomics) until the answer is there:
 * the guest sees a synchronous function, the main thread never blocks.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { nodeHostBytes, nodeSandboxModule, WorldSandbox, type HostCall } from '../sandbox/index.js';
import { ComponentTwin, type ModuleImporter } from '../component/instance.js';
import type { HostReply, LaneOp, LaneReply, LaneWorkerData } from './protocol.js';

const data = workerData as LaneWorkerData;
const port = parentPort;
if (port === null) throw new TypeError('lane-worker runs inside a worker thread started by SandboxLane');
// Hashing and compression run natively in this thread (`__host_bytes`), not posted to the owner.
const sandbox = WorldSandbox.create(nodeSandboxModule(data.wasm), data.limits, nodeHostBytes);

/** An error the guest sees as a HostError, with the code the host gave. */
class HostFailure extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

const hostCall: HostCall = (op, arg) => {
  data.hostPort.postMessage([op, arg]);
  Atomics.wait(data.signal, 0, 0);
  Atomics.store(data.signal, 0, 0);
  let received = receiveMessageOnPort(data.hostPort);
  // Seen under load (2 cores, load 15+): woken with the reply not yet readable on the port. It is
  // posted before the signal is set, so wait for it a little (1 ms at a time, up to 1 s).
  for (let waited = 0; received === undefined && waited < 1000; waited++) {
    Atomics.wait(data.signal, 0, 0, 1);
    received = receiveMessageOnPort(data.hostPort);
  }
  if (received === undefined) throw new HostFailure('the host did not answer', undefined);
  const reply = received.message as HostReply;
  if (reply[0] === 0) return reply[1];
  throw new HostFailure(reply[1], reply[2] ?? undefined);
};

/** Component twins loaded here (runtime/component/), each in its own WebAssembly instance beside the sandbox. */
const components = new Map<string, ComponentTwin>();
/** jco's transpiled module, imported as a `data:` URL (its text came from the owner's thread). */
const importModule: ModuleImporter = (js) => import(`data:text/javascript;base64,${Buffer.from(js).toString('base64')}`) as ReturnType<ModuleImporter>;

async function loadComponent(op: Extract<LaneOp, { kind: 'load-component' }>): Promise<LaneReply['result']> {
  sandbox.unload(op.name);
  components.delete(op.name);
  try {
    components.set(op.name, await ComponentTwin.load(op.name, op.code, importModule));
    return { ok: '' };
  } catch (e) {
    return { error: { code: 'load_error', message: `the component did not instantiate: ${e instanceof Error ? e.message : String(e)}` } };
  }
}

function perform(op: LaneOp): LaneReply['result'] | Promise<LaneReply['result']> {
  switch (op.kind) {
    case 'load':
      components.delete(op.name);
      return sandbox.load(op.name, op.source, op.options);
    case 'load-component':
      return loadComponent(op);
    case 'call': {
      const component = components.get(op.name);
      if (component !== undefined) return component.call(op.fn, op.input, op.host ? hostCall : undefined);
      return sandbox.call(op.name, op.fn, op.input, op.host ? hostCall : undefined);
    }
    case 'unload':
      components.delete(op.name);
      sandbox.unload(op.name);
      return { ok: '' };
    case 'memory': {
      const component = components.get(op.name);
      return { memory: component !== undefined ? component.memoryUsed() : sandbox.memoryUsed(op.name) };
    }
  }
}

port.on('message', (op: LaneOp) => {
  void Promise.resolve(perform(op)).then((result) => port.postMessage({ result, alive: sandbox.alive } satisfies LaneReply));
});
port.postMessage('ready');
