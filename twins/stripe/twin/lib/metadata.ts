/**
 * Stripe's metadata rules: an update merges keys; a key sent empty is removed; `metadata=""`
 * clears everything. At most 50 keys, keys up to 40 characters, values up to 500.
 */
import { invalid } from '../errors.js';
import { isObj, type Obj } from './util.js';

// Builtins as module bindings: a global lookup is slow in a node:vm context (see util.ts).
const { Object, String } = globalThis;

export function applyMetadata(current: Obj | undefined, sent: unknown, param = 'metadata'): Record<string, string> {
  const out: Record<string, string> = {};
  if (current !== undefined) for (const [k, v] of Object.entries(current)) out[k] = String(v);
  if (sent === undefined) return out;
  if (sent === '' || sent === null) return {};
  if (!isObj(sent)) throw invalid('Invalid object', param);
  for (const [k, v] of Object.entries(sent)) {
    if (k.length > 40) {
      throw invalid(`Metadata keys can have at most 40 characters. Key '${k}' has ${k.length} characters.`, `${param}[${k}]`);
    }
    if (k === '') throw invalid('Metadata keys cannot be empty.', param);
    if (v === '' || v === null) {
      delete out[k];
      continue;
    }
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
      throw invalid(`Invalid value for metadata key '${k}': values must be strings.`, `${param}[${k}]`);
    }
    const s = String(v);
    if (s.length > 500) {
      throw invalid(`Metadata values can have at most 500 characters.`, `${param}[${k}]`);
    }
    out[k] = s;
  }
  if (Object.keys(out).length > 50) {
    throw invalid('You can have at most 50 metadata keys.', param);
  }
  return out;
}
