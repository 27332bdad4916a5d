/**
 * The credentials the access bench compares, made as a user makes them (spec: Named key,
 * Session; docs/browser.md), over whatever carries the requests (HTTP, or the core's own
 * `dispatch` in-process): two named keys with `POST {world_api}/keys`, and two sessions opened
 * with `POST {world_api}/session` at the world's own origin (a request to the host's address
 * with `Host: <world>--<org>.localhost:<port>`, as a browser resolving `*.localhost` sends it),
 * one with the world's token, one with the read key. Every answer's status is checked: a row of
 * 401s would measure the refusal, not the check.
 */

/** One answer, whatever carried it. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** Sends one request: `path` from the root (`/-/local/bench/keys`); header names in lower case. */
export type Send = (method: string, path: string, headers: Record<string, string>, body?: string) => Promise<Answer>;

/** A world as the bench addresses it. */
export interface BenchWorld {
  /** `<org>/<world>`. */
  name: string;
  /** The world's token. */
  token: string;
  /** `{world_url}` and `{world_api}` as paths from the host's root: `/local/bench`, `/-/local/bench`. */
  urlPath: string;
  apiPath: string;
  /** `Host` of the host's own address (`127.0.0.1:<port>`), which every request carries but the origin's. */
  host: string;
  /** `Host` of the world's own origin: `bench--local.localhost:<port>`. */
  originHost: string;
  /** The read every row sends, a path from the root: `{world_url}/hello/v1/greetings/<id>`. */
  readPath: string;
}

/** The rows, in the order the tables list them; `token` is every ratio's baseline. */
export const CREDENTIALS = ['token', 'token-origin', 'read-key', 'write-key', 'session', 'read-key-session'] as const;
export type CredentialKind = (typeof CREDENTIALS)[number];

export const CREDENTIAL_WHAT: Record<CredentialKind, string> = {
  token: "the world's token in x-kit-token (baseline)",
  'token-origin': "the world's token in x-kit-token, at the world's origin (Host)",
  'read-key': 'a named read key (tok_k_…) in x-kit-token',
  'write-key': 'a named write key (tok_k_…) in x-kit-token',
  session: "a write session's cookie at the world's origin (opened with the token)",
  'read-key-session': "a read session's cookie at the world's origin (opened with the read key: its key is checked too)",
};

/** The headers each row sends with the read. */
export type CredentialHeaders = Record<CredentialKind, Record<string, string>>;

function expectStatus(a: Answer, status: number, what: string): void {
  if (a.status !== status) throw new Error(`${what} answered ${a.status}, not ${status}: ${a.text.slice(0, 300)}`);
}

/** The `kit_session=<id>` pair of an answer's `Set-Cookie`, as a browser sends it back. */
function sessionCookie(a: Answer, what: string): string {
  const m = /(?:^|,\s*)(kit_session=[A-Za-z0-9_-]+)/.exec(a.headers['set-cookie'] ?? '');
  if (m === null) throw new Error(`${what} set no kit_session cookie (${a.status} ${a.text.slice(0, 200)})`);
  return m[1]!;
}

async function makeKey(send: Send, w: BenchWorld, name: string, scope: 'read' | 'write'): Promise<string> {
  const a = await send('POST', `${w.apiPath}/keys`, { 'x-kit-token': w.token, 'content-type': 'application/json' }, JSON.stringify({ name, scope }));
  expectStatus(a, 201, `POST ${w.apiPath}/keys (${scope})`);
  const key = (JSON.parse(a.text) as { key?: string }).key;
  if (key === undefined || !key.startsWith('tok_k_')) throw new Error(`POST ${w.apiPath}/keys answered no key: ${a.text.slice(0, 200)}`);
  return key;
}

async function openSession(send: Send, w: BenchWorld, credential: string, what: string): Promise<string> {
  const a = await send('POST', `${w.apiPath}/session`, { host: w.originHost, 'x-kit-token': credential, 'content-type': 'application/json' }, JSON.stringify({ world: w.name }));
  expectStatus(a, 200, `POST ${w.apiPath}/session with ${what}`);
  return sessionCookie(a, `POST ${w.apiPath}/session with ${what}`);
}

/**
 * Makes the keys and opens the sessions, then checks that every row's read answers 200 (and
 * that a made-up key and a made-up session do not: the rows would otherwise measure nothing).
 */
export async function prepareCredentials(send: Send, w: BenchWorld): Promise<CredentialHeaders> {
  const readKey = await makeKey(send, w, 'bench-read', 'read');
  const writeKey = await makeKey(send, w, 'bench-write', 'write');
  const session = await openSession(send, w, w.token, "the world's token");
  const readKeySession = await openSession(send, w, readKey, 'the read key');
  // What a browser's own fetch from the world's page sends besides the cookie.
  const page = { host: w.originHost, 'sec-fetch-site': 'same-origin' };
  const headers: CredentialHeaders = {
    token: { host: w.host, 'x-kit-token': w.token },
    'token-origin': { host: w.originHost, 'x-kit-token': w.token },
    'read-key': { host: w.host, 'x-kit-token': readKey },
    'write-key': { host: w.host, 'x-kit-token': writeKey },
    session: { ...page, cookie: session },
    'read-key-session': { ...page, cookie: readKeySession },
  };
  for (const kind of CREDENTIALS) expectStatus(await send('GET', w.readPath, headers[kind]), 200, `GET ${w.readPath} with ${kind}`);
  expectStatus(await send('GET', w.readPath, { host: w.host, 'x-kit-token': `tok_k_${'x'.repeat(43)}` }), 401, `GET ${w.readPath} with a made-up key`);
  expectStatus(await send('GET', w.readPath, { ...page, cookie: `kit_session=${'x'.repeat(43)}` }), 401, `GET ${w.readPath} with a made-up session`);
  return headers;
}
