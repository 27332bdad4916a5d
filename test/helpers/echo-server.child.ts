/**
 * A child process for socket tests of the uWS adapter (test/helpers/child-server.ts starts
 * it): the single-world server over an echo world. uWS aborts the whole process on misuse,
 * so the server runs here and the test sees it die instead of dying with it.
 * Options as JSON in KIT_ECHO_SERVER; commands over IPC: `release` a gate, `close`, `received`.
 */
import { echoWorld } from '../../host/echo-world.js';
import { startSingleWorldServer } from '../../host/single-world.js';
import type { SingleWorldOptions } from '../../host/single-world.js';

type Options = Pick<SingleWorldOptions, 'tokens' | 'maxBodyBytes' | 'budget' | 'drainTimeoutMs'>;
type Command = { id: number; cmd: 'release'; gate: string } | { id: number; cmd: 'close' } | { id: number; cmd: 'received' };

const options = JSON.parse(process.env['KIT_ECHO_SERVER'] ?? '{}') as Options;
const world = echoWorld('w', 'code-7');
const server = await startSingleWorldServer({ world, org: 'local', twins: [], port: 0, ...options });
const send = (m: object): void => void process.send?.(m);

process.on('message', (m: Command) => {
  if (m.cmd === 'release') {
    world.release(m.gate);
    send({ id: m.id });
  } else if (m.cmd === 'close') {
    void server.close().then(() => send({ id: m.id, closed: true }));
  } else {
    send({ id: m.id, received: world.received.map((r) => `${r.method} ${r.path}`) });
  }
});
send({ port: server.port });
