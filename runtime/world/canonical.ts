/**
 * Deterministic JSON: object keys sorted (UTF-16 code-unit order, as Array#sort) at every
 * level, no whitespace. Values that JSON cannot hold are mapped the way JSON.stringify
 * maps them (undefined members dropped, non-finite numbers as null), so the same tree
 * always gives the same bytes.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  write(value, out);
  return out.join('');
}

function write(value: unknown, out: string[]): void {
  if (value === null || value === undefined) {
    out.push('null');
    return;
  }
  switch (typeof value) {
    case 'string':
      out.push(JSON.stringify(value));
      return;
    case 'number':
      out.push(Number.isFinite(value) ? JSON.stringify(value) : 'null');
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'bigint':
      out.push(JSON.stringify(value.toString()));
      return;
    case 'object':
      break;
    default:
      out.push('null');
      return;
  }
  if (value instanceof Date) {
    out.push(JSON.stringify(Number.isFinite(value.getTime()) ? value.toISOString() : null));
    return;
  }
  if (value instanceof Uint8Array) {
    // Bytes (msgpack bin) as base64: JSON has no bytes.
    out.push(JSON.stringify(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')));
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      const v: unknown = value[i];
      write(v === undefined || typeof v === 'function' || typeof v === 'symbol' ? null : v, out);
    }
    out.push(']');
    return;
  }
  const entries: [string, unknown][] =
    value instanceof Map ? [...value.entries()].map(([k, v]) => [String(k), v]) : Object.entries(value);
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  out.push('{');
  let first = true;
  for (const [k, v] of entries) {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    if (!first) out.push(',');
    first = false;
    out.push(JSON.stringify(k), ':');
    write(v, out);
  }
  out.push('}');
}
