/**
 * Python apps under `kit world attach`, with Debian's own Python (/usr/bin/python3, not whatever
 * python3 is first on PATH) and Debian's packages (python3-stripe 5.0.0 and python3-requests,
 * which `make languages` installs): small unchanged programs (test/attach/fixtures/python/) make
 * a Stripe customer at https://api.stripe.com and read it back, with the vendor SDK, requests,
 * urllib.request and the clients that ignore the usual variables; each customer is then read
 * from the world itself.
 * `python3 -I` (which ignores PYTHONPATH, so kit's sitecustomize) shows what fails without it,
 * where that failure stays inside the world's proxy.
 * A package that is not installed skips its test, saying so.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAttach, cleanEnv, customerInWorld, REPO, run, runAttached, serveWorld, TOKENS } from '../harness.js';
import type { Built, ServedWorld } from '../harness.js';

const PYTHON = '/usr/bin/python3';

/** Why a test cannot run here (printed, and in its name), or null when /usr/bin/python3 imports every module. */
function missing(modules: string[], debianPackages: string): string | null {
  if (!existsSync(PYTHON)) return `no ${PYTHON} (Debian's python3)`;
  const r = spawnSync(PYTHON, ['-c', `import ${modules.join(', ')}`], { encoding: 'utf8' });
  if (r.status === 0) return null;
  return `${PYTHON} cannot import ${modules.join(', ')}: install Debian's ${debianPackages} (make languages)`;
}

function skipNote(name: string, reason: string | null): string {
  if (reason === null) return name;
  console.log(`skipped: ${name}: ${reason}`);
  return `${name} [skipped: ${reason}]`;
}

let served: ServedWorld;
let built: Built;
let scratch: string;

beforeAll(async () => {
  [served, built, scratch] = await Promise.all([serveWorld(['stripe']), buildAttach(), mkdtemp(join(tmpdir(), 'kit-python-test-'))]);
});
afterAll(async () => {
  await Promise.all([served?.close(), built?.close(), scratch === undefined ? undefined : rm(scratch, { recursive: true, force: true })]);
});

/** Runs Debian's python3 under `kit world attach`; PYTHONPATH only as given. */
function attachPython(args: string[], env: Record<string, string> = {}) {
  const childEnv = cleanEnv(env);
  if (env['PYTHONPATH'] === undefined) delete childEnv['PYTHONPATH'];
  return runAttached(served, built, [PYTHON, ...args], childEnv);
}

/** The customer as the world holds it, under the app's API key. */
async function customerOf(id: string, apiKey: string): Promise<{ email?: string }> {
  const found = await customerInWorld(served, id, apiKey);
  expect(found.status).toBe(200);
  return found;
}

/**
 * Each program (test/attach/fixtures/python/) takes an API key and an email, makes a customer
 * with its client and reads it back with the same client, then prints one line of JSON: the id
 * and the email it read.
 */
const FIXTURES = join(REPO, 'test', 'attach', 'fixtures', 'python');
const PROGRAMS = {
  stripe: 'stripe_sdk.py',
  requests: 'requests_client.py',
  urllib: 'urllib_request.py',
  certifi: 'certifi_context.py',
  httplib2: 'httplib2_client.py',
  urllib3: 'urllib3_pool.py',
  aiohttp: 'aiohttp_session.py',
  httpx: 'httpx_client.py',
};
type Client = keyof typeof PROGRAMS;

/** python3 [flags] <the client's program> <api key> <email>. */
const program = (client: Client | 'app_sitecustomize', flags: string[] = []): string[] => [
  ...flags,
  join(FIXTURES, client === 'app_sitecustomize' ? 'app_sitecustomize.py' : PROGRAMS[client]),
  `sk_test_py_${client}`,
  `${client}@example.com`,
];

interface Case {
  client: Client;
  modules: string[];
  packages: string;
  /**
   * What the same program prints on stderr under `python3 -I` (no sitecustomize), for a client that
   * still goes through the proxy without it; null for one that works without it, and for one that
   * would go past the proxy to the real api.stripe.com (a test reaches no real vendor).
   */
  without: RegExp | null;
}

const CASES: Case[] = [
  // The issue: stripe checks against its bundled ca-certificates.crt, so the world's CA is not trusted.
  { client: 'stripe', modules: ['stripe'], packages: 'python3-stripe', without: /self-signed certificate in certificate chain/ },
  { client: 'requests', modules: ['requests'], packages: 'python3-requests', without: null },
  { client: 'urllib', modules: ['urllib.request', 'ssl'], packages: 'python3', without: null },
  // Debian's certifi names the system's file, which holds no world CA.
  { client: 'certifi', modules: ['certifi'], packages: 'python3-certifi', without: /CERTIFICATE_VERIFY_FAILED/ },
  { client: 'httplib2', modules: ['httplib2'], packages: 'python3-httplib2', without: /CERTIFICATE_VERIFY_FAILED/ },
  // Without kit these two ignore the proxy and look api.stripe.com up themselves: a customer in
  // the twin is the proof they went through it.
  { client: 'urllib3', modules: ['urllib3'], packages: 'python3-urllib3', without: null },
  { client: 'aiohttp', modules: ['aiohttp'], packages: 'python3-aiohttp', without: null },
  { client: 'httpx', modules: ['httpx'], packages: 'python3-httpx', without: null },
];

describe('kit world attach -- python3 (Debian)', () => {
  for (const c of CASES) {
    const reason = missing(c.modules, c.packages);
    const apiKey = `sk_test_py_${c.client}`;
    it.skipIf(reason !== null)(skipNote(`${c.client}: makes and reads a customer at https://api.stripe.com on the twin, the app unchanged`, reason), async () => {
      const r = await attachPython(program(c.client));
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const printed = JSON.parse(r.stdout) as { id: string; email: string; where?: string };
      expect(printed.id).toMatch(/^cus_/);
      expect(printed.email).toBe(`${c.client}@example.com`);
      expect((await customerOf(printed.id, apiKey)).email).toBe(`${c.client}@example.com`);
      if (c.client === 'certifi') {
        // A file of the run's own, gone with it: the app's certifi is never changed on disk.
        expect(printed.where).toMatch(/kit-attach-[^/]+\/python-attach\/trust-[0-9a-f]{16}\.pem$/);
        expect(existsSync(printed.where as string)).toBe(false);
      }
    });
    if (c.without === null) continue;
    const without = c.without;
    it.skipIf(reason !== null)(skipNote(`${c.client}: fails without kit's sitecustomize (python3 -I ignores PYTHONPATH)`, reason), async () => {
      const r = await attachPython(program(c.client, ['-I']));
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(without);
    });
  }

  const stripeMissing = missing(['stripe'], 'python3-stripe');
  it.skipIf(stripeMissing !== null)(skipNote("runs the app's own sitecustomize (the next on PYTHONPATH), and stripe still reaches the twin", stripeMissing), async () => {
    const appSite = join(scratch, 'app-site');
    await mkdir(appSite);
    await writeFile(join(appSite, 'sitecustomize.py'), 'import sys\nsys.app_sitecustomize = "ran"\n');
    const r = await attachPython(program('app_sitecustomize'), { PYTHONPATH: appSite });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const printed = JSON.parse(r.stdout) as { ran: string | null; file: string; path: string; id: string };
    expect(printed.ran).toBe('ran');
    // `import sitecustomize` answers the app's module, as it would without kit.
    expect(printed.file).toBe(join(appSite, 'sitecustomize.py'));
    // kit's folder first, then the user's entries.
    expect(printed.path).toMatch(new RegExp(`^/.*kit-attach-[^/]+/python:${appSite}$`));
    expect((await customerOf(printed.id, 'sk_test_py_app_sitecustomize')).email).toBe('app_sitecustomize@example.com');
  });

  it.skipIf(stripeMissing !== null)(skipNote("an app's sitecustomize that fails is reported as Python reports it, and the world's CA is still trusted", stripeMissing), async () => {
    const appSite = join(scratch, 'failing-site');
    await mkdir(appSite);
    await writeFile(join(appSite, 'sitecustomize.py'), 'raise RuntimeError("the app site broke")\n');
    const r = await attachPython(program('stripe'), { PYTHONPATH: appSite });
    expect(r.stderr).toBe('Error in sitecustomize; set PYTHONVERBOSE for traceback:\nRuntimeError: the app site broke\n');
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { email: string }).email).toBe('stripe@example.com');
  });

  it.skipIf(stripeMissing !== null)(skipNote('an attach inside another (two of kit\'s sitecustomize, each finding the other) still prepares stripe', stripeMissing), async () => {
    const inner = [built.kit, 'world', 'attach', served.server.worldUrl, '--token', TOKENS.token, '--', PYTHON, ...program('stripe')];
    const r = await run(process.execPath, [built.kit, 'world', 'attach', served.server.worldUrl, '--token', TOKENS.token, '--', process.execPath, ...inner], cleanEnv());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const printed = JSON.parse(r.stdout) as { id: string; email: string };
    expect((await customerOf(printed.id, 'sk_test_py_stripe')).email).toBe('stripe@example.com');
  });

  const pythonMissing = missing(['json'], 'python3');
  it.skipIf(pythonMissing !== null)(skipNote('imports nothing at start-up that Python would not have imported without kit', pythonMissing), async () => {
    const listModules = 'import json, sys; print(json.dumps(sorted(sys.modules)))';
    const plainEnv = cleanEnv();
    delete plainEnv['PYTHONPATH'];
    const plain = await run(PYTHON, ['-c', listModules], plainEnv);
    const attached = await attachPython(['-c', listModules]);
    expect([attached.code, attached.stderr]).toEqual([0, '']);
    const before = new Set(JSON.parse(plain.stdout) as string[]);
    const added = (JSON.parse(attached.stdout) as string[]).filter((m) => !before.has(m));
    // Its patches load only for a module it prepares that is already imported (a .pth file may import certifi).
    const watchedAtStart = ['stripe', 'httplib2', 'certifi', 'urllib3', 'aiohttp'].some((m) => before.has(m));
    expect(added).toEqual(watchedAtStart ? ['kit_attach_patches'] : []);
  });

  it.skipIf(pythonMissing !== null)(skipNote("says in one line that Python is not prepared when the temporary folder has a ':' (PYTHONPATH's separator), and runs the command", pythonMissing), async () => {
    const colon = await mkdtemp(join(scratch, 'kit:attach:python-'));
    const r = await attachPython(['-c', 'import os; print(os.environ.get("PYTHONPATH", "unset"))'], { TMPDIR: colon });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('unset\n');
    // Other languages may say the same of their own variables.
    expect(r.stderr.split('\n')).toContainEqual(expect.stringMatching(/^kit: Python is not prepared for the world: the temporary folder .*kit:attach:python-.* has a ":" in its path, which PYTHONPATH cannot carry \(set TMPDIR to another folder\)$/));
  });
});
