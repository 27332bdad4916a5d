import { describe, expect, it } from 'vitest';
import { KitError } from '../errors.js';
import { parseDuration, parseScenario } from './parse.js';

function refused(text: string, contentType?: string): KitError {
  try {
    parseScenario(text, contentType);
  } catch (e) {
    if (e instanceof KitError) return e;
    throw e;
  }
  throw new Error('the document was accepted');
}

const GOOD = `
state: started
handlers:
  - name: decline-next-charge
    match: { method: POST, path: /v1/payment_intents }
    times: 1
    respond:
      status: 402
      headers: { request-id: "req_{{request.id}}" }
      body: { error: { type: card_error, code: card_declined } }
  - name: rate-limited
    match: { path: /v1/customers }
    when: { state: started }
    times: 3
    respond: { status: 429, headers: { Retry-After: 1 }, body: { error: { message: "Too many requests" } } }
    then: { state: recovered }
  - name: slow-lists
    match: "GET /v1/:resource"
    delay: 2s
  - name: flaky
    match: { path: /v1/charges }
    fault: reset
  - name: computed
    match: { method: get, path: /v1/customers/:id }
    js: |
      return { status: 200, body: { id: request.params.id } }
`;

describe('parseScenario: a good document', () => {
  it('reads every handler into normal form', () => {
    const s = parseScenario(GOOD);
    expect(s.format).toBe('yaml');
    expect(s.initialState).toBe('started');
    expect(s.handlers.map((h) => [h.name, h.action.kind, h.times, h.delayMs])).toEqual([
      ['decline-next-charge', 'respond', 1, 0],
      ['rate-limited', 'respond', 3, 0],
      ['slow-lists', 'pass', null, 2000],
      ['flaky', 'fault', null, 0],
      ['computed', 'js', null, 0],
    ]);
    expect(s.handlers[1]?.action).toEqual({ kind: 'respond', status: 429, headers: { 'Retry-After': '1' }, body: { error: { message: 'Too many requests' } } });
    expect(s.handlers[2]?.match).toEqual({ method: 'GET', path: '/v1/:resource' });
    expect(s.handlers[4]?.match).toEqual({ method: 'GET', path: '/v1/customers/:id' });
    expect(s.handlers[1]?.then).toEqual({ state: 'recovered' });
  });

  it('reads the same document as JSON', () => {
    const json = JSON.stringify({ handlers: [{ name: 'x', match: { path: '/v1/x' }, fault: { status: 503 } }] });
    const s = parseScenario(json, 'application/json; charset=utf-8');
    expect(s.format).toBe('json');
    expect(s.initialState).toBe('started');
    expect(s.handlers[0]?.action).toEqual({ kind: 'fault', fault: { type: 'status', status: 503, headers: {} } });
  });

  it('names handlers without a name by their index and accepts an empty list', () => {
    expect(parseScenario('handlers:\n  - match: /x\n    delay: 10ms\n').handlers[0]?.name).toBe('handlers[0]');
    expect(parseScenario('handlers: []').handlers).toEqual([]);
  });
});

describe('parseScenario: refusals name the handler and the field', () => {
  it('names the handler index, name and field of a bad status', () => {
    const e = refused('handlers:\n  - { match: /a, delay: 1s }\n  - { match: /b, delay: 1s }\n  - name: broken\n    match: /c\n    respond: { status: 99 }\n');
    expect(e.code).toBe('invalid_scenario');
    expect(e.message).toMatch(/^handlers\[2\]\.respond\.status: must be an integer 100-599/);
    expect(e.message).toContain('broken');
    expect(e.details).toMatchObject({ field: 'handlers[2].respond.status', handler: { index: 2, name: 'broken' } });
  });

  const cases: [string, string, string][] = [
    ['unknown top-level field', 'handler: []', 'handler'],
    ['unknown handler field (typo)', 'handlers:\n  - match: /x\n    tims: 2\n    delay: 1s', 'handlers[0].tims'],
    ['unknown matcher field', 'handlers:\n  - match: { path: /x, qurey: { a: b } }\n    delay: 1s', 'handlers[0].match.qurey'],
    ['unknown respond field', 'handlers:\n  - match: /x\n    respond: { stauts: 200 }', 'handlers[0].respond.stauts'],
    ['missing match', 'handlers:\n  - delay: 1s', 'handlers[0].match'],
    ['bad path', 'handlers:\n  - match: { path: v1/x }\n    delay: 1s', 'handlers[0].match.path'],
    ['rest not last', 'handlers:\n  - match: { path: "/v1/*a/b" }\n    delay: 1s', 'handlers[0].match.path'],
    ['bad method', 'handlers:\n  - match: { path: /x, method: "G T" }\n    delay: 1s', 'handlers[0].match.method'],
    ['bad shorthand', 'handlers:\n  - match: "POST /x extra"\n    delay: 1s', 'handlers[0].match'],
    ['bad delay', 'handlers:\n  - match: /x\n    delay: 2 seconds', 'handlers[0].delay'],
    ['delay as a bare number', 'handlers:\n  - match: /x\n    delay: 200', 'handlers[0].delay'],
    ['delay over 60 s', 'handlers:\n  - match: /x\n    delay: 61s', 'handlers[0].delay'],
    ['times 0', 'handlers:\n  - match: /x\n    times: 0\n    delay: 1s', 'handlers[0].times'],
    ['times fraction', 'handlers:\n  - match: /x\n    times: 1.5\n    delay: 1s', 'handlers[0].times'],
    ['two actions', 'handlers:\n  - match: /x\n    respond: { status: 200 }\n    fault: reset', 'handlers[0].fault'],
    ['a handler that does nothing', 'handlers:\n  - match: /x', 'handlers[0]'],
    ['a fault that is not 5xx', 'handlers:\n  - match: /x\n    fault: { status: 404 }', 'handlers[0].fault.status'],
    ['a fault word that is not reset', 'handlers:\n  - match: /x\n    fault: timeout', 'handlers[0].fault'],
    ['empty js', 'handlers:\n  - match: /x\n    js: "  "', 'handlers[0].js'],
    ['unreachable when-state (typo)', 'handlers:\n  - match: /x\n    then: { state: recovered }\n    delay: 1s\n  - match: /y\n    when: { state: recoverd }\n    respond: {}', 'handlers[1].when.state'],
    ['unknown when field', 'handlers:\n  - match: /x\n    when: { state: started, count: 2 }\n    delay: 1s', 'handlers[0].when.count'],
    ['duplicate names', 'handlers:\n  - { name: a, match: /x, delay: 1s }\n  - { name: a, match: /y, delay: 1s }', 'handlers[1].name'],
    ['unclosed template', 'handlers:\n  - match: /x\n    respond: { body: { a: "{{request.id" } }', 'handlers[0].respond.body.a'],
    ['template with code', 'handlers:\n  - match: /x\n    respond: { body: { a: "{{request.id + 1}}" } }', 'handlers[0].respond.body.a'],
    ['template of an unknown root', 'handlers:\n  - match: /x\n    respond: { body: { a: "{{process.env}}" } }', 'handlers[0].respond.body.a'],
    ['template of a parameter the path lacks', 'handlers:\n  - match: /v1/customers/:id\n    respond: { body: { a: "{{request.params.ide}}" } }', 'handlers[0].respond.body.a'],
    ['template of an upper-case header', 'handlers:\n  - match: /x\n    respond: { headers: { x: "{{request.headers.X-Id}}" } }', 'handlers[0].respond.headers.x'],
    ['template reaching the prototype', 'handlers:\n  - match: /x\n    respond: { body: ["{{request.body.constructor}}"] }', 'handlers[0].respond.body[0]'],
    ['tree lookup without id', 'handlers:\n  - match: /x\n    respond: { body: "{{tree.customer}}" }', 'handlers[0].respond.body'],
    ['infinite number in a body', 'handlers:\n  - match: /x\n    respond: { body: { a: .inf } }', 'handlers[0].respond.body'],
    ['an unquoted template (YAML reads a mapping)', 'handlers:\n  - match: /x\n    respond:\n      body:\n        id: {{request.params.id}}', 'handlers[0].respond.body.id'],
    ['an unquoted template as the whole body', 'handlers:\n  - match: /x\n    respond: { body: {{request.body}} }', 'handlers[0].respond.body'],
    ['bad header name', 'handlers:\n  - match: /x\n    respond: { headers: { "a b": "1" } }', 'handlers[0].respond.headers.a b'],
    ['initial state not a name', 'state: { a: 1 }\nhandlers: []', 'state'],
    ['handlers not a list', 'handlers: { a: 1 }', 'handlers'],
    ['empty document', '', 'handlers'],
    ['a document that is a list', '- a\n- b', ''],
  ];
  it.each(cases)('%s', (_what, text, field) => {
    const e = refused(text);
    expect(e.code).toBe('invalid_scenario');
    expect(e.details?.['field']).toBe(field);
    if (field !== '') expect(e.message.startsWith(`${field}: `)).toBe(true);
  });

  it('refuses more than 1000 handlers', () => {
    const doc = { handlers: Array.from({ length: 1001 }, (_, i) => ({ match: { path: `/x/${i}` }, delay: '1ms' })) };
    expect(refused(JSON.stringify(doc), 'application/json').details?.['field']).toBe('handlers');
    expect(parseScenario(JSON.stringify({ handlers: doc.handlers.slice(0, 1000) }), 'application/json').handlers).toHaveLength(1000);
  });

  it('refuses malformed YAML and JSON with invalid_scenario', () => {
    expect(refused('handlers: [ { match: ').code).toBe('invalid_scenario');
    expect(refused('{"handlers": [', 'application/json').code).toBe('invalid_scenario');
    expect(refused('handlers: []\nhandlers: []').code).toBe('invalid_scenario'); // a repeated key
  });

  it('refuses a key repeated in any map, naming it, and reads a map of many keys in one pass', () => {
    expect(refused('handlers: []\nstate: a\nstate: b').message).toBe('the document is not YAML: the key "state" appears twice in one map');
    expect(refused('handlers:\n  - match: GET /x\n    respond: { status: 200, status: 201 }').message).toMatch(/the key "status" appears twice/);
    expect(refused('{ handlers: [], 1: a, "1": b }').message).toMatch(/the key "1" appears twice/);
    // 40,000 keys (389 KB): yaml's own pairwise check took 36 s over 60,000; this is refused for what it is.
    const many = Array.from({ length: 40_000 }, (_, i) => `k${i}: 1`).join('\n');
    expect(refused(many).message).toMatch(/^k0: unknown field/);
    // The same key in two maps is no repeat.
    expect(parseScenario('handlers:\n  - { match: /a, delay: 1s }\n  - { match: /b, delay: 1s }', 'application/yaml').handlers).toHaveLength(2);
  });

  it('refuses an alias bomb and deep nesting without crashing', () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 0; i < 8; i++) bomb.push(`${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`);
    bomb.push('handlers: []');
    expect(refused(bomb.join('\n')).code).toBe('invalid_scenario');
    const deep = `handlers:\n  - match: /x\n    respond: { body: ${'['.repeat(5000)}${']'.repeat(5000)} }`;
    expect(refused(deep).code).toBe('invalid_scenario');
    const deepJson = `{"handlers":[{"match":"/x","respond":{"body":${'['.repeat(100000)}${']'.repeat(100000)}}}]}`;
    expect(refused(deepJson, 'application/json').code).toBe('invalid_scenario');
  });

  it('does not let __proto__ in a document reach a prototype', () => {
    const e = refused('handlers:\n  - match: /x\n    delay: 1s\n    __proto__: { polluted: true }');
    expect(e.details?.['field']).toBe('handlers[0].__proto__');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(refused('{"handlers":[{"match":"/x","respond":{"body":{"__proto__":{"a":1}}}}]}', 'application/json').code).toBe('invalid_scenario');
  });

  it('refuses a document over 4 MB (YAML: 512 KB) and an unknown content type with their own codes', () => {
    expect(refused(`handlers: []\n#${'x'.repeat(4 * 1024 * 1024)}`).code).toBe('body_too_large');
    // YAML reads slowly (600 KB of `[{},…]` took 1.7 s); the same size as JSON is fine.
    const flow = `{"handlers": [{"match": "/x", "respond": {"body": [${Array(200_000).fill('{}').join(',')}]}}]}`;
    expect(flow.length).toBeGreaterThan(512 * 1024);
    expect(refused(flow, 'application/yaml').message).toBe('a YAML scenario is at most 524288 bytes; send a larger one as JSON (Content-Type: application/json, up to 4194304 bytes)');
    expect(parseScenario(flow, 'application/json').handlers).toHaveLength(1);
    expect(refused('handlers: []', 'multipart/form-data').code).toBe('unsupported_media_type');
  });
});

describe('parseDuration', () => {
  it('reads ms, s and m up to 60 s', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('2s')).toBe(2000);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration('1m')).toBe(60000);
    expect(parseDuration('0ms')).toBe(0);
    expect(typeof parseDuration('60.001s')).toBe('string');
    expect(typeof parseDuration('-1s')).toBe('string');
    expect(typeof parseDuration('1h')).toBe('string');
  });
});
