/**
 * Where in a scenario document the world's refusal points. The world answers `invalid_scenario`
 * with the field (`handlers[1].respond.status`), the problem, and the handler's index and name
 * (runtime/scenario/parse.ts), or, for a document that does not parse, the parser's message
 * (which names a line and column, or a position). This finds the line in the text the person
 * edits, so the page can mark it. It reads the text, not a parse of it (the page has no YAML
 * parser): a line it cannot find is null and the page shows the message alone.
 */

/** What the world said is wrong (the `details` of its `invalid_scenario` error). */
export interface ScenarioProblem {
  message: string;
  field?: unknown;
  problem?: unknown;
  handler?: unknown;
}

/** A 1-based line of the document. */
export interface Located {
  line: number;
}

/** The line of a 0-based character offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** A line named by a parser's message: `at line 3, column 5` (yaml), `(line 3 column 5)` or `at position 42` (JSON). */
function fromParserMessage(text: string, message: string): Located | null {
  const line = /\bline (\d+)/i.exec(message);
  if (line !== null) return { line: Number(line[1]) };
  const position = /\bposition (\d+)/i.exec(message);
  if (position !== null) return { line: lineAt(text, Number(position[1])) };
  return null;
}

/** `handlers[1].respond.status` → `['handlers', 1, 'respond', 'status']`. */
export function fieldPath(field: string): (string | number)[] {
  const path: (string | number)[] = [];
  for (const part of field.split('.')) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (m === null) {
      path.push(part);
      continue;
    }
    if (m[1] !== '') path.push(m[1]!);
    for (const index of m[2]!.matchAll(/\[(\d+)\]/g)) path.push(Number(index[1]));
  }
  return path;
}

// ------------------------------------------------------------ JSON: a scan of the text

/**
 * The offset where the value at `path` starts in JSON text, following keys and indexes as far
 * as they exist; the deepest point reached (the key's own offset for a missing last key).
 */
function jsonOffset(text: string, path: (string | number)[]): number | null {
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const skipString = () => {
    i++; // the opening quote
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
  };
  /** Moves past one value of any kind. */
  const skipValue = () => {
    skipSpace();
    if (text[i] === '"') return skipString();
    if (text[i] === '{' || text[i] === '[') {
      let depth = 0;
      while (i < text.length) {
        const c = text[i]!;
        if (c === '"') {
          skipString();
          continue;
        }
        if (c === '{' || c === '[') depth++;
        if (c === '}' || c === ']') depth--;
        i++;
        if (depth === 0) return;
      }
      return;
    }
    while (i < text.length && !/[,\]}\s]/.test(text[i]!)) i++;
  };
  skipSpace();
  let reached: number | null = i;
  for (const step of path) {
    skipSpace();
    if (typeof step === 'number') {
      if (text[i] !== '[') return reached;
      i++;
      for (let n = 0; n < step; n++) {
        skipValue();
        skipSpace();
        if (text[i] !== ',') return reached;
        i++;
      }
      skipSpace();
      reached = i;
      continue;
    }
    if (text[i] !== '{') return reached;
    i++;
    let found = false;
    for (;;) {
      skipSpace();
      if (text[i] !== '"') return reached;
      const keyAt = i;
      skipString();
      let key: unknown;
      try {
        key = JSON.parse(text.slice(keyAt, i));
      } catch {
        return reached;
      }
      skipSpace();
      if (text[i] !== ':') return reached;
      i++;
      if (key === step) {
        reached = keyAt;
        found = true;
        break;
      }
      skipValue();
      skipSpace();
      if (text[i] !== ',') return reached;
      i++;
    }
    if (!found) return reached;
  }
  return reached;
}

// ------------------------------------------------------------ YAML: block style by indentation

interface YamlLine {
  /** 1-based. */
  line: number;
  indent: number;
  /** The text after the indentation, a list item's `- ` counted as indentation. */
  body: string;
  /** Whether the line starts a list item (`- …`). */
  item: boolean;
}

function yamlLines(text: string): YamlLine[] {
  const out: YamlLine[] = [];
  text.split('\n').forEach((raw, n) => {
    const trimmed = raw.replace(/\s+$/, '');
    if (trimmed.trim() === '' || trimmed.trim().startsWith('#')) return;
    const m = /^(\s*)(- +)?(.*)$/.exec(trimmed)!;
    out.push({ line: n + 1, indent: m[1]!.length + (m[2]?.length ?? 0), body: m[3]!, item: m[2] !== undefined });
  });
  return out;
}

/** The line at which the value at `path` starts in block-style YAML, as deep as it can follow. */
function yamlLine(text: string, path: (string | number)[]): number | null {
  const lines = yamlLines(text);
  // The block being searched: lines [from, to) of `lines`, its entries at indentation `indent`.
  let from = 0;
  let to = lines.length;
  let reached: number | null = lines[0]?.line ?? null;
  const blockEnd = (start: number, indent: number) => {
    let end = start + 1;
    while (end < to && lines[end]!.indent > indent) end++;
    return end;
  };
  for (const step of path) {
    if (from >= to) return reached;
    if (typeof step === 'number') {
      // The list's items: lines starting `- ` at the block's first item's indentation.
      const first = lines.slice(from, to).find((l) => l.item);
      if (first === undefined) return reached;
      const itemIndent = first.indent;
      const items = lines
        .map((l, k) => ({ l, k }))
        .slice(from, to)
        .filter(({ l }) => l.item && l.indent === itemIndent);
      const hit = items[step];
      if (hit === undefined) return reached;
      reached = hit.l.line;
      // The item's own entries: its first line (after `- `) and the lines indented under it.
      let end = hit.k + 1;
      while (end < to && lines[end]!.indent >= itemIndent && !(lines[end]!.item && lines[end]!.indent === itemIndent)) end++;
      from = hit.k;
      to = end;
      continue;
    }
    const indent = lines[from]!.indent;
    const key = new RegExp(`^(["']?)${step.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\1\\s*:(\\s|$)`);
    let k = from;
    while (k < to && !(lines[k]!.indent === indent && key.test(lines[k]!.body))) k++;
    if (k >= to) return reached;
    reached = lines[k]!.line;
    const end = blockEnd(k, indent);
    from = k + 1;
    to = end;
  }
  return reached;
}

/** The line of the second `key:` of one YAML map (the parser's "the key "k" appears twice in one map"). */
function repeatedYamlKey(text: string, key: string): number | null {
  const lines = yamlLines(text);
  const pattern = new RegExp(`^(["']?)${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\1\\s*:(\\s|$)`);
  for (let k = 0; k < lines.length; k++) {
    const first = lines[k]!;
    if (!pattern.test(first.body)) continue;
    // The same map: lines at the same indentation, until one less indented or a new list item there.
    for (let j = k + 1; j < lines.length; j++) {
      const l = lines[j]!;
      if (l.indent < first.indent || (l.item && l.indent === first.indent)) break;
      if (l.indent === first.indent && pattern.test(l.body)) return l.line;
    }
  }
  return null;
}

/**
 * The line the world's refusal points at in `text` (as `format`), or null. A handler named in
 * the error but a field not found leads to the handler's first line.
 */
export function locateProblem(text: string, format: 'json' | 'yaml', problem: ScenarioProblem): Located | null {
  const field = typeof problem.field === 'string' ? problem.field : '';
  if (problem.problem === 'not JSON' || problem.problem === 'not YAML' || field === '') {
    const twice = /the key "((?:[^"\\]|\\.)*)" appears twice/.exec(problem.message);
    if (twice !== null && format === 'yaml') {
      const line = repeatedYamlKey(text, JSON.parse(`"${twice[1]!}"`) as string);
      return line === null ? null : { line };
    }
    const parsed = fromParserMessage(text, problem.message);
    if (parsed !== null || field === '') return parsed;
  }
  const path = fieldPath(field);
  if (format === 'json') {
    const offset = jsonOffset(text, path);
    return offset === null ? null : { line: lineAt(text, offset) };
  }
  const line = yamlLine(text, path);
  return line === null ? null : { line };
}
