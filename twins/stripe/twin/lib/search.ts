/**
 * Stripe's search query language over the fields Stripe documents as searchable:
 *   field:"value" (exact, case-insensitive)   field~"sub" (substring, 3+ characters)
 *   amount>1000, created<=1700000000 (numbers)   metadata["key"]:"value"
 *   field:null (absent)   -clause (negation)   clauses joined by AND or by OR, not both.
 * Pages with `page` (the `next_page` of the previous answer) and `limit`. A query with a
 * clause an index serves (`indexedClause`) reads that clause's matches only.
 */
import type { Call } from './request.js';
import { invalid } from '../errors.js';
import { type Rec } from './store.js';
import { matching, newestFirst, newestWhere, type Filter } from './lists.js';
import { canMatch, metadataEntry } from './indexes.js';
import { getPath, isObj, type Obj } from './util.js';

export type FieldKind = 'string' | 'token' | 'number' | 'bool';
/** A field's kind, or its kind and the dotted path it reads (`subscription` on invoices). */
export type FieldSpec = FieldKind | [FieldKind, string];

function kindOf(spec: FieldSpec): FieldKind {
  return Array.isArray(spec) ? spec[0] : spec;
}
function pathOf(spec: FieldSpec | undefined, field: string): string {
  return Array.isArray(spec) ? spec[1] : field;
}

interface Clause {
  negate: boolean;
  field: string;
  metaKey?: string;
  op: ':' | '~' | '>' | '<' | '>=' | '<=';
  value: string | number | null;
}

interface Token {
  kind: 'word' | 'string' | 'op' | 'minus';
  text: string;
}

function bad(message: string): never {
  throw invalid(message, 'query');
}

function tokenize(q: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const ch = q[i] as string;
    if (/\s/.test(ch)) { i++; continue; }
    if (ch === '"' || ch === "'") {
      let j = i + 1, text = '';
      while (j < q.length && q[j] !== ch) {
        if (q[j] === '\\' && j + 1 < q.length) { text += q[j + 1]; j += 2; continue; }
        text += q[j];
        j++;
      }
      if (j >= q.length) bad(`Invalid query: an unterminated string at position ${i}.`);
      out.push({ kind: 'string', text });
      i = j + 1;
      continue;
    }
    if (ch === '>' || ch === '<') {
      if (q[i + 1] === '=') { out.push({ kind: 'op', text: ch + '=' }); i += 2; }
      else { out.push({ kind: 'op', text: ch }); i++; }
      continue;
    }
    if (ch === ':' || ch === '~') { out.push({ kind: 'op', text: ch }); i++; continue; }
    if (ch === '-' && (out.length === 0 || out[out.length - 1]?.kind === 'word' && /^(AND|OR)$/i.test(out[out.length - 1]?.text ?? ''))) {
      out.push({ kind: 'minus', text: '-' });
      i++;
      continue;
    }
    let j = i, text = '';
    while (j < q.length) {
      const cj = q[j] as string;
      if (/\s/.test(cj) || cj === ':' || cj === '~' || cj === '>' || cj === '<') break;
      if (cj === '[') {
        // metadata["key"]: keep the bracketed, quoted key inside the word.
        const close = q.indexOf(']', j);
        if (close < 0) bad('Invalid query: an unterminated [ in a field name.');
        text += q.slice(j, close + 1);
        j = close + 1;
        continue;
      }
      text += cj;
      j++;
    }
    if (text === '') bad(`Invalid query: unexpected '${ch}' at position ${i}.`);
    out.push({ kind: 'word', text });
    i = j;
  }
  return out;
}

export function parseQuery(q: string): { join: 'AND' | 'OR'; clauses: Clause[] } {
  if (q.trim() === '') bad('Missing required param: query.');
  if (q.length > 10_000) bad('The query is too long.');
  const tokens = tokenize(q);
  const clauses: Clause[] = [];
  let join: 'AND' | 'OR' | undefined;
  let i = 0;
  for (;;) {
    let negate = false;
    if (tokens[i]?.kind === 'minus') { negate = true; i++; }
    const f = tokens[i];
    if (f === undefined || f.kind !== 'word') bad('Invalid query: expected a field name.');
    const op = tokens[i + 1];
    if (op === undefined || op.kind !== 'op') bad(`Invalid query: expected an operator after '${f.text}'.`);
    const v = tokens[i + 2];
    if (v === undefined || v.kind === 'op' || v.kind === 'minus') bad(`Invalid query: expected a value after '${f.text}${op.text}'.`);
    let value: string | number | null;
    if (v.kind === 'string') value = v.text;
    else if (v.text === 'null') value = null;
    else if (/^-?\d+(\.\d+)?$/.test(v.text)) value = Number(v.text);
    else bad(`Invalid query: the value '${v.text}' must be quoted.`);
    const clause: Clause = { negate, field: f.text, op: op.text as Clause['op'], value };
    const meta = /^metadata\[(["'])(.*)\1\]$/.exec(f.text);
    if (meta !== null) { clause.field = 'metadata'; clause.metaKey = meta[2] as string; }
    clauses.push(clause);
    i += 3;
    const next = tokens[i];
    if (next === undefined) break;
    const word = next.kind === 'word' ? next.text.toUpperCase() : '';
    if (word !== 'AND' && word !== 'OR') bad(`Invalid query: expected AND or OR, found '${next.text}'.`);
    if (join !== undefined && join !== word) bad('Invalid query: a query cannot combine AND and OR.');
    join = word;
    i++;
  }
  if (clauses.length > 10) bad('Invalid query: at most 10 clauses.');
  return { join: join ?? 'AND', clauses };
}

function matches(o: Obj, c: Clause, kind: FieldKind, path: string): boolean {
  const raw = c.metaKey !== undefined ? (isObj(o.metadata) ? o.metadata[c.metaKey] : undefined) : getPath(o, path);
  const v = isObj(raw) && typeof raw.id === 'string' ? raw.id : raw;
  if (c.value === null) return v === null || v === undefined || v === '';
  if (kind === 'number') {
    if (typeof v !== 'number' || typeof c.value !== 'number') return false;
    switch (c.op) {
      case ':': return v === c.value;
      case '>': return v > c.value;
      case '<': return v < c.value;
      case '>=': return v >= c.value;
      case '<=': return v <= c.value;
      default: return false;
    }
  }
  if (kind === 'bool') return String(v) === String(c.value);
  if (v === null || v === undefined) return false;
  const have = String(v).toLowerCase();
  const want = String(c.value).toLowerCase();
  if (c.op === '~') return have.includes(want);
  return have === want;
}

function check(clauses: Clause[], fields: Record<string, FieldSpec>, resource: string): void {
  for (const c of clauses) {
    const spec = fields[c.field];
    const kind = c.metaKey !== undefined ? 'string' : spec === undefined ? undefined : kindOf(spec);
    if (kind === undefined || (c.field === 'metadata' && c.metaKey === undefined)) {
      bad(`Field \`${c.field}\` is an unsupported search field for resource \`${resource}\`. See https://stripe.com/docs/search#query-fields-for-${resource.replace(/_/g, '-')} for a list of supported fields.`);
    }
    if (c.op === '~') {
      if (kind !== 'string') bad(`Invalid query: \`~\` is not supported on the field \`${c.field}\`.`);
      if (typeof c.value !== 'string' || c.value.length < 3) bad('Invalid query: a substring search (~) needs at least 3 characters.');
    }
    if ((c.op === '>' || c.op === '<' || c.op === '>=' || c.op === '<=') && kind !== 'number') {
      bad(`Invalid query: range operators are not supported on the field \`${c.field}\`.`);
    }
  }
}

/**
 * A clause every match must satisfy that an index can serve, as a filter: an exact,
 * case-insensitive match of a metadata value (of the types whose metadata is indexed) or of a
 * customer's email. A search then reads that clause's matches (`newestWhere`), not every
 * object of the type, and tests the other clauses on them.
 */
function indexedClause(type: string, parsed: { join: 'AND' | 'OR'; clauses: Clause[] }): Filter | undefined {
  if (parsed.join === 'OR' && parsed.clauses.length > 1) return undefined;
  for (const cl of parsed.clauses) {
    if (cl.negate || cl.op !== ':' || cl.value === null) continue;
    if (cl.metaKey !== undefined && canMatch(type, 'metadata')) return matching(type, 'metadata', metadataEntry(cl.metaKey, String(cl.value)));
    if (type === 'customer' && cl.field === 'email') return matching(type, 'email', String(cl.value));
  }
  return undefined;
}

/** `GET /v1/<resource>/search`: `{ object: 'search_result', data, has_more, next_page, url }`. */
export function search(c: Call, type: string, resource: string, fields: Record<string, FieldSpec>): Obj {
  const query = c.p.str('query');
  if (query === undefined) throw invalid('Missing required param: query.', 'query', 'parameter_missing');
  const parsed = parseQuery(query);
  check(parsed.clauses, fields, resource);
  const limit = c.p.int('limit', 1, 100) ?? 10;
  const page = c.p.str('page');
  let from: number | undefined;
  if (page !== undefined && page !== '') {
    const m = /^page_([0-9]{1,12})$/.exec(page);
    if (m === null) throw invalid(`Invalid page: ${page}`, 'page');
    from = Number(m[1]);
  }
  const test = (o: Obj): boolean => {
    if (o.deleted === true) return false;
    const results = parsed.clauses.map((cl) => {
      const spec = fields[cl.field] as FieldSpec;
      const kind = cl.metaKey !== undefined ? 'string' : kindOf(spec);
      const hit = matches(o, cl, kind, pathOf(spec, cl.field));
      return cl.negate ? !hit : hit;
    });
    return parsed.join === 'AND' ? results.every(Boolean) : results.some(Boolean);
  };
  const served = indexedClause(type, parsed);
  const candidates = (below?: number): Iterable<Rec> => (served === undefined ? newestFirst(c, type, below) : newestWhere(c, type, served, below));
  const data: Obj[] = [];
  let lastSeq = 0, hasMore = false;
  for (const rec of candidates(from)) {
    if (!test(rec.o)) continue;
    if (data.length === limit) { hasMore = true; break; }
    data.push(rec.o);
    lastSeq = rec.s;
  }
  const out: Obj = {
    object: 'search_result',
    data,
    has_more: hasMore,
    next_page: hasMore ? `page_${lastSeq}` : null,
    url: `/v1/${resource}/search`,
  };
  if ((c.p.strings('expand') ?? []).includes('total_count')) {
    let n = 0;
    for (const rec of candidates()) if (test(rec.o)) n++;
    out.total_count = n;
  }
  return out;
}
