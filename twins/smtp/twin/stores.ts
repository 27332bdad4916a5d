/**
 * Stores: named, deterministic projections of the mailbox, served at
 * `GET {world_url}/smtp/twin/store/<name>`. A store only reads and answers the same for the
 * same state (no clock, no random, a fixed order). The mirror (twins/smtp/mirror/) lists the
 * mailbox through `messages`.
 */
import type { ReadTree, Store } from '../../../sdk/twin/index.js';
import { arrivals, cursorOf, find, MAX_LIMIT, matches, MESSAGE, one } from './resources/mailbox.js';
import { summarize, type MessageSummary } from './lib/summary.js';

/**
 * `messages?limit=&starting_after=&ending_before=&to=&from=&subject=`: a page of message
 * summaries, newest first, paged and filtered as `GET /messages` is (the same cursors, the
 * same filters), with the mailbox's `count` and `has_more`. `limit` is 1–100 (100 when absent
 * or not a number). A summary is kept in the arrival index (summary.ts), so a page reads only
 * the index, never a message's body; a message delivered before summaries were kept is read
 * and summarised. An unknown cursor fails, naming it.
 */
export const messagesStore: Store = (tree: ReadTree, query) => {
  const limitText = Number(one(query, 'limit'));
  const limit = Number.isInteger(limitText) ? Math.min(Math.max(limitText, 1), MAX_LIMIT) : MAX_LIMIT;
  const cursor = cursorOf(tree, query);
  if ('code' in cursor) throw new Error(cursor.message);
  const messages: MessageSummary[] = [];
  let hasMore = false;
  for (const entry of arrivals(tree, cursor)) {
    const summary = isSummary(entry.summary, entry.id) ? entry.summary : summaryOf(tree, entry.id);
    if (summary === undefined || !matches(summary, query)) continue;
    if (messages.length === limit) {
      hasMore = true;
      break;
    }
    messages.push(summary);
  }
  if (cursor.upward) messages.reverse();
  return { count: tree.count(MESSAGE), messages, has_more: hasMore };
};

/**
 * Whether an index entry's summary holds what the filters and the mirror read (a few typeof
 * tests): one the twin did not write (brought in from elsewhere) is made again from its message.
 */
function isSummary(s: MessageSummary | undefined, id: string): s is MessageSummary {
  return (
    typeof s === 'object' && s !== null && s.id === id && Array.isArray(s.from) && Array.isArray(s.to) && Array.isArray(s.cc) && Array.isArray(s.bcc) &&
    typeof s.envelope === 'object' && s.envelope !== null && Array.isArray(s.envelope.to) && typeof s.envelope.from === 'string'
  );
}

/** The summary of a message whose index entry has none (delivered before summaries were kept). */
function summaryOf(tree: ReadTree, id: string): MessageSummary | undefined {
  const m = find({ tree }, id);
  return m === undefined ? undefined : summarize(m);
}
