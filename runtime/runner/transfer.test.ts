/**
 * A twin moved from one world to another by its export files: every read of the moved world
 * answers as the source's did, and an import that should not happen changes nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KitError } from '../errors.js';
import { MemoryStorage, type Storage } from '../store/index.js';
import { WorldStore } from '../world/index.js';
import { openTestWorld, type TestWorld } from '../../test/helpers/world.js';
import { CLOCK_FILE, exportTwinFiles, importTwinFiles, MAX_IMPORT_BYTES, MAX_IMPORT_FILE_BYTES, parseTwinFiles, twinFilePath, type TwinFiles } from './transfer.js';

const VENDORS = ['hello', 'stripe'];
const TRACE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const SCENARIO = JSON.stringify({ handlers: [{ name: 'slow-lists', match: 'GET /v1/customers', times: 1, respond: { status: 429, body: { error: { type: 'rate_limit_error' } } } }] });

const open: TestWorld[] = [];
afterEach(async () => {
  for (const w of open.splice(0)) await w.close();
});

async function world(name: string, storage?: Storage): Promise<TestWorld> {
  const w = await openTestWorld({ vendors: VENDORS, world: name, ...(storage !== undefined ? { storage } : {}) });
  open.push(w);
  return w;
}

const KEY = { authorization: 'Bearer sk_test_transfer' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded', ...KEY };

/** A source world with history: greetings (one expiring: a timed move), Stripe customers (one deleted) and a product, a scenario, the clock moved on. */
async function sourceWorld(): Promise<{ w: TestWorld; ids: Record<string, string> }> {
  const w = await world('source');
  expect((await w.api('PUT', '/clock', { at: '2026-05-01T09:00:00.000Z' })).status).toBe(200);
  const ada = await w.vendor('POST', '/hello/v1/greetings', { name: 'Ada', expires_in: 3600 });
  const grace = await w.vendor('POST', '/stripe/v1/customers', 'email=grace%40example.com&metadata[team]=navy', { ...FORM, traceparent: TRACE });
  await w.api('POST', '/clock/advance', { by: '30m' });
  const gone = await w.vendor('POST', '/stripe/v1/customers', 'email=gone%40example.com', FORM);
  expect((await w.vendor('DELETE', `/stripe/v1/customers/${gone.json.id}`, undefined, KEY)).status).toBe(200);
  const product = await w.vendor('POST', '/stripe/v1/products', 'name=Widget', FORM);
  await w.api('POST', '/clock/advance', { by: '2h' });
  // The greeting's expiry fell due: the twin performs it on its next request.
  expect((await w.vendor('GET', `/hello/v1/greetings/${ada.json.id}`)).json.status).toBe('expired');
  expect((await w.api('PUT', '/twins/stripe/scenario', SCENARIO, { 'content-type': 'application/json' })).status).toBe(200);
  return { w, ids: { ada: ada.json.id, grace: grace.json.id, gone: gone.json.id, product: product.json.id } };
}

/** Every key and value of a storage, to tell that nothing was written. */
function dump(storage: Storage): string {
  return JSON.stringify([...storage.range({ start: [''], end: ['\uffff'] })]);
}

/** A fresh storage with world `name` made with the test twins, and the engine's world over it (its runner not open). */
function emptyWorld(name: string): { storage: MemoryStorage; store: WorldStore } {
  const storage = new MemoryStorage();
  const store = new WorldStore(storage);
  store.createWorld(name, { twins: VENDORS });
  return { storage, store };
}

/** The world API and vendor reads a person would compare. */
async function reads(w: TestWorld, ids: Record<string, string>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const path of ['/log/hello', '/log/stripe', '/timeline', '/timeline?trace=4bf92f3577b34da6a3ce929d0e0e4736', '/diff', '/map', '/clock', '/twins/stripe/scenario']) {
    out[path] = (await w.api('GET', path)).text;
  }
  for (const twin of VENDORS) {
    const head = w.runner.world.head(twin);
    for (let at = 0; at <= head; at++) out[`/checkpoint/${twin}?at=${at}`] = (await w.api('GET', `/checkpoint/${twin}?at=${at}`)).text;
  }
  // The history cut names the world (`source@stripe:2`): its positions are what must agree.
  for (const at of ['2026-05-01T08:00:00.000Z', '2026-05-01T09:00:00.000Z', '2026-05-01T09:30:00.000Z', '2026-05-01T12:00:00.000Z']) {
    const cut = (await w.api('GET', `/history?at=${at}`)).json as { views: Record<string, { position: number }> };
    out[`/history?at=${at}`] = Object.fromEntries(Object.entries(cut.views).map(([t, v]) => [t, v.position]));
  }
  for (const path of [`/stripe/v1/customers/${ids.grace}`, `/stripe/v1/customers/${ids.gone}`, `/stripe/v1/products/${ids.product}`, '/stripe/v1/products', `/hello/v1/greetings/${ids.ada}`, '/hello/v1/greetings']) {
    const r = await w.vendor('GET', path, undefined, KEY);
    out[path] = [r.status, r.text];
  }
  return out;
}

describe('a twin exported and imported', () => {
  it('answers every read in the new world as in the old: log, timeline, diff, checkpoints at every position, history cuts, records, the scenario and the clock', async () => {
    const { w: source, ids } = await sourceWorld();
    const exports = VENDORS.map((t) => exportTwinFiles(source.storage, source.runner.world, t));
    // What the world API answers is the same export.
    for (const e of exports) expect((await source.api('GET', `/twins/${e.twin}/export`)).json).toEqual(e);
    expect(Object.keys(exports[1]!.files).sort()).toEqual([CLOCK_FILE, twinFilePath('stripe', 'log'), twinFilePath('stripe', 'scenario'), twinFilePath('stripe', 'twin')]);
    expect(Object.keys(exports[0]!.files)).not.toContain(twinFilePath('hello', 'scenario'));

    const { storage, store } = emptyWorld('moved');
    const summaries = exports.map((e) => importTwinFiles(storage, store.openWorld('moved'), JSON.parse(JSON.stringify(e))));
    expect(summaries.map((s) => [s.twin, s.entries, s.position, s.scenario, s.clock])).toEqual([
      ['hello', source.runner.world.head('hello'), source.runner.world.head('hello'), false, source.runner.world.clock()],
      ['stripe', source.runner.world.head('stripe'), source.runner.world.head('stripe'), true, source.runner.world.clock()],
    ]);
    const moved = await world('moved', storage);
    // Reads change nothing, so both worlds are read in the same order.
    const before = await reads(source, ids);
    const after = await reads(moved, ids);
    expect(after).toEqual(before);
    // As Stripe does, a deleted customer is answered as deleted.
    expect(JSON.parse((before[`/stripe/v1/customers/${ids.gone}`] as [number, string])[1])).toMatchObject({ id: ids.gone, deleted: true });
    // The scenario came along in force: the next customer list is answered 429, once.
    expect((await moved.vendor('GET', '/stripe/v1/customers', undefined, KEY)).status).toBe(429);
    expect((await moved.vendor('GET', '/stripe/v1/customers', undefined, KEY)).status).toBe(200);
    // Exported again from the moved world: the same files, the source's name aside.
    for (const e of exports) {
      const again = exportTwinFiles(moved.storage, moved.runner.world, e.twin);
      const manifest = twinFilePath(e.twin, 'twin');
      expect({ ...again.files, [manifest]: '' }).toEqual({ ...e.files, [manifest]: '' });
      expect(JSON.parse(again.files[manifest]!)).toEqual({ ...JSON.parse(e.files[manifest]!), world: 'moved' });
    }
  });

  it('writes the log one entry a line, as the engine stores it, with the format version beside it', async () => {
    const { w } = await sourceWorld();
    const { files } = exportTwinFiles(w.storage, w.runner.world, 'stripe');
    const lines = files[twinFilePath('stripe', 'log')]!.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l))).toEqual(w.runner.world.log('stripe').entries);
    expect(JSON.parse(lines[0]!).traceparent).toBe(TRACE);
    expect(JSON.parse(files[twinFilePath('stripe', 'twin')]!)).toEqual({ version: 1, twin: 'stripe', entries: lines.length, world: 'source' });
    expect(JSON.parse(files[CLOCK_FILE]!)).toEqual({ version: 1, at: '2026-05-01T11:30:00.000Z', frozen: true });
  });

  it('leaves a set clock alone when the export ran on the wall clock, and refuses one it would move back', async () => {
    const src = await world('wall');
    await src.vendor('POST', '/hello/v1/greetings', { name: 'Ada' });
    const e = exportTwinFiles(src.storage, src.runner.world, 'hello');
    expect(JSON.parse(e.files[CLOCK_FILE]!).frozen).toBe(false);
    const { storage, store } = emptyWorld('target');
    store.openWorld('target').setClock('2027-01-01T00:00:00.000Z');
    expect(importTwinFiles(storage, store.openWorld('target'), e).clock).toEqual({ at: '2027-01-01T00:00:00.000Z', frozen: true });

    const { w: later } = await sourceWorld();
    const e2 = exportTwinFiles(later.storage, later.runner.world, 'stripe');
    const t2 = emptyWorld('target2');
    t2.store.openWorld('target2').setClock('2027-01-01T00:00:00.000Z');
    const before = dump(t2.storage);
    expect(codeOf(() => importTwinFiles(t2.storage, t2.store.openWorld('target2'), e2))).toBe('clock_backward');
    expect(dump(t2.storage)).toBe(before);
    // Without the clock file the world's own clock stays, and the twin comes in.
    const { [CLOCK_FILE]: _, ...noClock } = e2.files;
    expect(importTwinFiles(t2.storage, t2.store.openWorld('target2'), { twin: 'stripe', files: noClock }).position).toBe(later.runner.world.head('stripe'));
  });
});

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return e instanceof KitError ? e.code : `not a KitError: ${String(e)}`;
  }
  return 'no error';
}

describe('an import refused', () => {
  /** A target with history of its own (hello), and a good export of stripe to spoil. */
  async function setting(): Promise<{ storage: MemoryStorage; store: WorldStore; good: TwinFiles }> {
    const { w } = await sourceWorld();
    const good = exportTwinFiles(w.storage, w.runner.world, 'stripe');
    const { storage, store } = emptyWorld('target');
    store.openWorld('target').appendBatch('hello', [{ cause: { kind: 'system', reason: 'seed' }, writes: [{ type: 'greeting', id: 'grt_1', value: { name: 'x' } }], occurredAt: '2026-04-01T00:00:00.000Z' }]);
    return { storage, store, good };
  }

  const log = (files: Record<string, string>): string[] => files[twinFilePath('stripe', 'log')]!.trimEnd().split('\n');
  const withLog = (good: TwinFiles, lines: string[], entries = lines.length): TwinFiles => ({
    twin: 'stripe',
    files: { ...good.files, [twinFilePath('stripe', 'log')]: `${lines.join('\n')}\n`, [twinFilePath('stripe', 'twin')]: JSON.stringify({ version: 1, twin: 'stripe', entries }) },
  });
  const edit = (line: string, change: (e: Record<string, unknown>) => void): string => {
    const e = JSON.parse(line) as Record<string, unknown>;
    change(e);
    return JSON.stringify(e);
  };

  it('with a stable code for each kind of bad input, writing nothing', async () => {
    const { storage, store, good } = await setting();
    const lines = log(good.files);
    const cases: [string, unknown, string][] = [
      ['not an object', 'files', 'invalid_import'],
      ['an unknown field', { ...good, extra: 1 }, 'invalid_import'],
      ['a bad twin name', { ...good, twin: '../stripe' }, 'invalid_import'],
      ['files not an object', { twin: 'stripe', files: [] }, 'invalid_import'],
      ['a path climbing out', { twin: 'stripe', files: { ...good.files, '.kit/world/../token': '{}' } }, 'invalid_import'],
      ['an absolute path', { twin: 'stripe', files: { ...good.files, '/etc/passwd': 'x' } }, 'invalid_import'],
      ['another root', { twin: 'stripe', files: { ...good.files, '.kit/token': '{}' } }, 'invalid_import'],
      ['a backslash', { twin: 'stripe', files: { ...good.files, '.kit\\world\\stripe\\log.jsonl': '' } }, 'invalid_import'],
      ['a doubled slash', { twin: 'stripe', files: { ...good.files, '.kit/world//stripe/log.jsonl': '' } }, 'invalid_import'],
      ['an unknown file', { twin: 'stripe', files: { ...good.files, '.kit/world/stripe/data.mdb': '' } }, 'invalid_import'],
      ['a file of another twin', { twin: 'stripe', files: { ...good.files, '.kit/world/hello/log.jsonl': '' } }, 'invalid_import'],
      ['content not a string', { twin: 'stripe', files: { ...good.files, [CLOCK_FILE]: 5 } }, 'invalid_import'],
      ['no log', { twin: 'stripe', files: { [twinFilePath('stripe', 'twin')]: good.files[twinFilePath('stripe', 'twin')] } }, 'invalid_import'],
      ['a newer format', { twin: 'stripe', files: { ...good.files, [twinFilePath('stripe', 'twin')]: JSON.stringify({ version: 2, twin: 'stripe', entries: lines.length }) } }, 'invalid_import'],
      ['a manifest of another twin', { twin: 'stripe', files: { ...good.files, [twinFilePath('stripe', 'twin')]: JSON.stringify({ version: 1, twin: 'hello', entries: lines.length }) } }, 'invalid_import'],
      ['a line that is not JSON', withLog(good, [...lines.slice(0, -1), '{"position":']), 'invalid_import'],
      ['a log cut short (no final newline)', { twin: 'stripe', files: { ...good.files, [twinFilePath('stripe', 'log')]: lines.join('\n') } }, 'invalid_import'],
      ['a count that disagrees', withLog(good, lines, lines.length + 1), 'invalid_import'],
      ['a gap in the positions', withLog(good, [lines[0]!, ...lines.slice(2)]), 'invalid_import'],
      ['positions not from 1', withLog(good, lines.slice(1)), 'invalid_import'],
      ['an entry going back in time', withLog(good, [lines[0]!, edit(lines[1]!, (e) => (e.occurredAt = '2020-01-01T00:00:00.000Z')), ...lines.slice(2)]), 'invalid_import'],
      ['an instant not as the engine writes it', withLog(good, [edit(lines[0]!, (e) => (e.occurredAt = '2026-05-01T09:00:00Z')), ...lines.slice(1)]), 'invalid_import'],
      ['an unknown cause', withLog(good, [edit(lines[0]!, (e) => (e.cause = { kind: 'magic' })), ...lines.slice(1)]), 'invalid_import'],
      ['a cause with a field too many', withLog(good, [edit(lines[0]!, (e) => ((e.cause as Record<string, unknown>).extra = 1)), ...lines.slice(1)]), 'invalid_import'],
      ['a write without a value', withLog(good, [edit(lines[0]!, (e) => (e.writes = [{ type: 'customer', id: 'cus_1' }])), ...lines.slice(1)]), 'invalid_import'],
      ['a write with an empty id', withLog(good, [edit(lines[0]!, (e) => (e.writes = [{ type: 'customer', id: '', value: {} }])), ...lines.slice(1)]), 'invalid_import'],
      ['a bad traceparent', withLog(good, [edit(lines[0]!, (e) => (e.traceparent = 'x')), ...lines.slice(1)]), 'invalid_import'],
      ['an entry with an unknown field', withLog(good, [edit(lines[0]!, (e) => (e.extra = true)), ...lines.slice(1)]), 'invalid_import'],
      ['a scenario that does not parse', { twin: 'stripe', files: { ...good.files, [twinFilePath('stripe', 'scenario')]: JSON.stringify({ source: '{"handlers":[{}]}', format: 'json', updatedAt: '2026-05-01T09:00:00.000Z' }) } }, 'invalid_import'],
      ['a clock file that is not one', { twin: 'stripe', files: { ...good.files, [CLOCK_FILE]: JSON.stringify({ version: 1, at: 'soon', frozen: true }) } }, 'invalid_import'],
      ['a clock behind the log', { twin: 'stripe', files: { ...good.files, [CLOCK_FILE]: JSON.stringify({ version: 1, at: '2026-05-01T09:00:00.000Z', frozen: true }) } }, 'invalid_import'],
      ['a file too large', { twin: 'stripe', files: { ...good.files, [twinFilePath('stripe', 'log')]: 'x'.repeat(MAX_IMPORT_FILE_BYTES + 1) } }, 'import_too_large'],
      ['a file too large in UTF-8 alone', { twin: 'stripe', files: { ...good.files, [twinFilePath('stripe', 'log')]: 'é'.repeat(MAX_IMPORT_FILE_BYTES / 2 + 1) } }, 'import_too_large'],
      [
        'files too large together',
        { twin: 'stripe', files: { ...good.files, [twinFilePath('stripe', 'log')]: 'x'.repeat(MAX_IMPORT_FILE_BYTES), [twinFilePath('stripe', 'scenario')]: 'x'.repeat(MAX_IMPORT_BYTES - MAX_IMPORT_FILE_BYTES + 1) } },
        'import_too_large',
      ],
      ['a twin not in the world', { twin: 'github', files: Object.fromEntries(Object.entries(good.files).map(([p, c]) => [p.replace('/stripe/', '/github/'), c.replace('"twin":"stripe"', '"twin":"github"')])) }, 'unknown_twin'],
      ['a twin whose log is not empty', { twin: 'hello', files: { [twinFilePath('hello', 'twin')]: JSON.stringify({ version: 1, twin: 'hello', entries: 0 }), [twinFilePath('hello', 'log')]: '' } }, 'twin_not_empty'],
    ];
    const before = dump(storage);
    const world = store.openWorld('target');
    for (const [name, body, code] of cases) {
      expect([name, codeOf(() => importTwinFiles(storage, world, body))]).toEqual([name, code]);
      expect([name, dump(storage)]).toEqual([name, before]);
    }
    // The good one still goes in after them all.
    expect(importTwinFiles(storage, world, good).entries).toBe(lines.length);
  });

  it('names the file and line of a bad entry', async () => {
    const { good } = await setting();
    const lines = log(good.files);
    let error: KitError | undefined;
    try {
      parseTwinFiles(withLog(good, [lines[0]!, lines[2]!]));
    } catch (e) {
      error = e as KitError;
    }
    expect(error?.details).toEqual({ path: twinFilePath('stripe', 'log'), line: 2, position: 2 });
    expect(error?.message).toContain('no gap');
  });
});
