/**
 * Keys and accounts. Stripe test mode has one account per key, so the twin does too: a
 * well-formed `sk_test_…` (or restricted `rk_test_…`) key opens the account named by a hash
 * of the key, made on first use. The world's own token used as the API key (the host says
 * so with `x-kit-auth: authorization`, as it does for a browser session of the world) opens
 * the default account, or with `Stripe-Account` any account the world holds: whoever holds
 * the world reads every account anyway (the `objects` store), and the mirror shows them so.
 * In a twin with a root, the account a refresh copied (`copiedAccount`) takes the place of
 * both: the world's token and every key open it.
 */
import type { ReadTree, TwinRequest } from '../../../../sdk/twin/types.js';
import { StripeError, malformedRecord, unauthorized } from '../errors.js';
import { hash62 } from './util.js';

// Builtins as module bindings: a global lookup is slow in a node:vm context (see util.ts).
const { Map, Math, String } = globalThis;

export const DEFAULT_ACCOUNT = 'acct_' + hash62('twinkit:default-account', 16);

const KEY = /^(sk|rk)_test_[A-Za-z0-9_]{1,247}$/;
/** An account id as the twin makes them (`acct_` and 16 base-62 characters). */
const ACCOUNT = /^acct_[A-Za-z0-9]{16}$/;

const NO_KEY =
  "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.";

const accounts = new Map<string, string>();

/** The record naming the account a root's refresh copied (root/): `('root', 'account') → 'acct_…'`. */
export const COPIED_ACCOUNT = { type: 'root', id: 'account' } as const;
/** An account id as a root may answer it (Stripe's are `acct_` and 16 characters). */
export const ROOT_ACCOUNT_ID = /^acct_[A-Za-z0-9]{1,64}$/;

/** The account a root's refresh copied, once one has: the account every key of a rooted twin opens. */
export function copiedAccount(tree: ReadTree): string | undefined {
  const v = tree.get<unknown>(COPIED_ACCOUNT.type, COPIED_ACCOUNT.id);
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !ROOT_ACCOUNT_ID.test(v)) throw malformedRecord(COPIED_ACCOUNT.type, COPIED_ACCOUNT.id, 'not an account id');
  return v;
}

/** The account a key opens. Remembered: a load test sends the same key on every request. */
export function accountForKey(key: string): string {
  let account = accounts.get(key);
  if (account === undefined) {
    account = 'acct_' + hash62('key:' + key, 16);
    // Bounded: a client that sends a new key every time must not grow the twin's memory.
    if (accounts.size >= 1024) accounts.clear();
    accounts.set(key, account);
  }
  return account;
}

function mask(key: string): string {
  const printable = key.replace(/[^\x20-\x7e]/g, '?');
  if (printable.length <= 12) return printable.slice(0, 3) + '*'.repeat(Math.max(0, printable.length - 3));
  const head = printable.startsWith('sk_test_') || printable.startsWith('rk_test_') ? printable.slice(0, 8) : printable.slice(0, 3);
  return head + '*'.repeat(Math.max(4, printable.length - head.length - 4)) + printable.slice(-4);
}

/** Base64 decoding without atob (QuickJS has none). Undefined for malformed input. */
export function base64Decode(text: string): string | undefined {
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const clean = text.replace(/=+$/, '');
  let bits = 0, acc = 0, out = '';
  for (const ch of clean) {
    const v = A.indexOf(ch);
    if (v < 0) return undefined;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += String.fromCharCode((acc >> bits) & 0xff);
    }
  }
  return out;
}

/** The key a request presents: Bearer, or Basic with the key as the user name (curl -u sk_test_…:). */
export function presentedKey(req: TwinRequest): string | undefined {
  const h = req.headers['authorization'];
  if (h === undefined || h.trim() === '') return undefined;
  const m = /^(\w+)\s+(.*)$/.exec(h.trim());
  if (m === null) return h.trim();
  const scheme = (m[1] as string).toLowerCase();
  const value = (m[2] as string).trim();
  if (scheme === 'bearer') return value;
  if (scheme === 'basic') {
    const decoded = base64Decode(value);
    if (decoded === undefined) return value;
    const colon = decoded.indexOf(':');
    return colon < 0 ? decoded : decoded.slice(0, colon);
  }
  return h.trim();
}

/**
 * The account this request acts for, or Stripe's 401. `holds` says whether the world holds an
 * account (it has a record): the world's own requests may name one with `Stripe-Account`.
 * `copied` answers the account a root's refresh copied, if any (`copiedAccount`): in a twin
 * with a root, the world's token and every key open it, as the real account's key does at Stripe.
 */
export function authenticate(
  req: TwinRequest,
  holds: (account: string) => boolean = () => false,
  copied: () => string | undefined = () => undefined,
): string {
  if ((req.headers['x-kit-auth'] ?? '').toLowerCase() === 'authorization') {
    const asked = req.headers['stripe-account'];
    if (asked !== undefined && ACCOUNT.test(asked) && holds(asked)) return asked;
    return connected(req, copied() ?? DEFAULT_ACCOUNT, 'the world token');
  }
  const key = presentedKey(req);
  if (key === undefined || key === '') throw unauthorized(NO_KEY);
  if (key.startsWith('pk_')) {
    throw unauthorized(
      'This API call cannot be made with a publishable API key. Please use a secret API key. You can find a list of your API keys at https://dashboard.stripe.com/account/apikeys.',
    );
  }
  if (!KEY.test(key)) throw unauthorized(`Invalid API Key provided: ${mask(key)}`);
  return connected(req, copied() ?? accountForKey(key), key);
}

/**
 * `Stripe-Account` (Connect) names an account to act for. The twin models no connected
 * accounts, so only the key's own account passes, as Stripe refuses an account the key
 * cannot reach.
 */
function connected(req: TwinRequest, own: string, key: string): string {
  const asked = req.headers['stripe-account'];
  if (asked === undefined || asked === '' || asked === own) return own;
  throw new StripeError(403, 'invalid_request_error',
    `The provided key '${mask(key)}' does not have access to account '${asked.slice(0, 64)}' (or that account does not exist). Application access may have been revoked.`,
    { code: 'account_invalid' });
}
