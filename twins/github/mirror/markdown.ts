/**
 * The Markdown GitHub renders in a README, an issue, a comment: a small subset parsed into a
 * tree the page renders with preact (never as HTML, so an issue body cannot inject markup):
 * headings, paragraphs, fenced code, block quotes, lists (with task boxes), rules; inline code,
 * bold, italics, strike-through, links (http, https and mailto only) and bare URLs. Images
 * show their alt text (the page loads nothing from elsewhere). Pure (tested in Node).
 */

export type Inline =
  | { t: 'text'; text: string }
  | { t: 'code'; text: string }
  | { t: 'strong' | 'em' | 'del'; children: Inline[] }
  | { t: 'link'; href: string; children: Inline[] };

export type Block =
  | { t: 'heading'; level: number; children: Inline[] }
  | { t: 'para'; children: Inline[] }
  | { t: 'code'; lang: string; text: string }
  | { t: 'quote'; children: Block[] }
  | { t: 'list'; ordered: boolean; start: number; items: { task: boolean | null; children: Block[] }[] }
  | { t: 'rule' };

const SAFE_URL = /^(https?:\/\/|mailto:)/i;
/** How far an opening `**`, `_`, `[` looks for its close. */
const WINDOW = 500;
/** The characters inline markup may start with. */
const OPENERS = new Set(['\\', '`', '*', '_', '~', '[', '!', 'h']);

/** Inline markup of one paragraph's text. */
export function parseInline(src: string): Inline[] {
  const out: Inline[] = [];
  let text = '';
  const flush = () => {
    if (text !== '') out.push({ t: 'text', text });
    text = '';
  };
  let i = 0;
  let closeAt = src.indexOf(']');
  while (i < src.length) {
    const ch = src[i] as string;
    if (!OPENERS.has(ch) || (ch === 'h' && !src.startsWith('http', i))) {
      text += ch;
      i++;
      continue;
    }
    // Delimiters close within a window: a hostile 64 KiB body of `**` stays linear.
    const rest = src.slice(i, i + WINDOW);
    if (ch === '\\' && i + 1 < src.length && /[\\`*_~[\]()#!>-]/.test(src[i + 1] as string)) {
      text += src[i + 1];
      i += 2;
      continue;
    }
    if (ch === '`') {
      const ticks = /^`+/.exec(rest)?.[0] ?? '`';
      const within = src.slice(i, i + 4 * WINDOW).indexOf(ticks, ticks.length);
      const end = within < 0 ? -1 : i + within;
      if (end > 0) {
        flush();
        out.push({ t: 'code', text: src.slice(i + ticks.length, end).trim() });
        i = end + ticks.length;
      } else {
        // No closing run: the whole run is text (not one tick at a time, which would search again for each).
        text += ticks;
        i += ticks.length;
      }
      continue;
    }
    const strong = /^(\*\*|__)(?=\S)([\s\S]*?\S)\1/.exec(rest);
    if (strong !== null) {
      flush();
      out.push({ t: 'strong', children: parseInline(strong[2] as string) });
      i += strong[0].length;
      continue;
    }
    const del = /^~~(?=\S)([\s\S]*?\S)~~/.exec(rest);
    if (del !== null) {
      flush();
      out.push({ t: 'del', children: parseInline(del[1] as string) });
      i += del[0].length;
      continue;
    }
    // `_x_` only at a word's edge, as GitHub reads it (snake_case_names stay as they are).
    const em = /^(\*|_)(?=\S)([\s\S]*?\S)\1(?![\w])/.exec(rest);
    if (em !== null && (ch === '*' || i === 0 || !/\w/.test(src[i - 1] as string))) {
      flush();
      out.push({ t: 'em', children: parseInline(em[2] as string) });
      i += em[0].length;
      continue;
    }
    // The next `]`, found once per `]` rather than once per `[` (a body of `[[[[…` is linear).
    if (closeAt !== -1 && closeAt < i) closeAt = src.indexOf(']', i);
    const link = (ch === '[' || ch === '!') && closeAt !== -1 && closeAt - i < WINDOW ? /^(!?)\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/.exec(rest) : null;
    if (link !== null) {
      flush();
      const [, bang, label, href] = link as unknown as [string, string, string, string];
      if (bang === '!') out.push({ t: 'text', text: label === '' ? '[image]' : `[${label}]` });
      else if (SAFE_URL.test(href)) out.push({ t: 'link', href, children: parseInline(label) });
      else out.push(...parseInline(label));
      i += link[0].length;
      continue;
    }
    const bare = /^https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"]/.exec(rest);
    if (bare !== null && (i === 0 || !/\w/.test(src[i - 1] as string))) {
      flush();
      out.push({ t: 'link', href: bare[0], children: [{ t: 'text', text: bare[0] }] });
      i += bare[0].length;
      continue;
    }
    text += ch;
    i++;
  }
  flush();
  return out;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const ITEM = /^( {0,3})([-*+]|(\d{1,9})[.)])\s+(.*)$/;
const QUOTE = /^ {0,3}> ?(.*)$/;

function startsBlock(line: string): boolean {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line);
}

/** A document's blocks. */
export function parseMarkdown(src: string): Block[] {
  return parseLines(src.replace(/\r\n?/g, '\n').split('\n'), 0);
}

function parseLines(lines: string[], depth: number): Block[] {
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (line.trim() === '') {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence !== null) {
      const marker = fence[1] as string;
      const body: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] as string).trimStart().startsWith(marker)) body.push(lines[i++] as string);
      i++;
      blocks.push({ t: 'code', lang: fence[2] ?? '', text: body.join('\n') });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading !== null) {
      blocks.push({ t: 'heading', level: (heading[1] as string).length, children: parseInline(heading[2] ?? '') });
      i++;
      continue;
    }
    if (RULE.test(line)) {
      blocks.push({ t: 'rule' });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i] as string)) inner.push(QUOTE.exec(lines[i++] as string)?.[1] ?? '');
      // Nesting is bounded: a hostile body of a thousand `>` renders flat past a few levels.
      blocks.push(depth < 8 ? { t: 'quote', children: parseLines(inner, depth + 1) } : { t: 'para', children: parseInline(inner.join(' ')) });
      continue;
    }
    const item = ITEM.exec(line);
    if (item !== null) {
      const ordered = item[3] !== undefined;
      const start = ordered ? Number(item[3]) : 1;
      const items: { task: boolean | null; children: Block[] }[] = [];
      while (i < lines.length) {
        const m = ITEM.exec(lines[i] as string);
        if (m === null || (m[3] !== undefined) !== ordered) break;
        const indent = (m[1] as string).length + (m[2] as string).length + 1;
        const body = [m[4] as string];
        i++;
        // The item's continuation: indented lines, and blank lines followed by indented ones.
        while (i < lines.length) {
          const next = lines[i] as string;
          if (next.trim() === '' ? /^\s{2,}\S/.test(lines[i + 1] ?? '') : /^\s{2,}/.test(next) || (!startsBlock(next) && body[body.length - 1]?.trim() !== '')) {
            body.push(next.trim() === '' ? '' : next.slice(Math.min(indent, next.length - next.trimStart().length)));
            i++;
          } else break;
        }
        const task = /^\[([ xX])\]\s+/.exec(body[0] as string);
        if (task !== null) body[0] = (body[0] as string).slice(task[0].length);
        items.push({ task: task === null ? null : task[1] !== ' ', children: depth < 8 ? parseLines(body, depth + 1) : [{ t: 'para', children: parseInline(body.join(' ')) }] });
      }
      blocks.push({ t: 'list', ordered, start, items });
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && (lines[i] as string).trim() !== '' && (para.length === 0 || !startsBlock(lines[i] as string))) para.push((lines[i++] as string).trim());
    blocks.push({ t: 'para', children: parseInline(para.join('\n')) });
  }
  return blocks;
}
