/**
 * The SMTP mirror reads the mailbox API's paths as its own addresses, and a search box's text
 * as the list's filters (routes.ts, plain functions: no browser needed).
 */
import { describe, expect, it } from 'vitest';
import { inboxPath, messagePath, parseSearch, searchText, viewOf, type View } from './routes.js';

describe("the SMTP mirror's addresses", () => {
  it('shows the inbox at /messages, with its filters and one cursor', () => {
    expect(viewOf('/messages')).toEqual({ kind: 'inbox', filters: {} });
    expect(viewOf('/messages/', '?to=bob&subject=Invoice%201&limit=3')).toEqual({ kind: 'inbox', filters: { to: 'bob', subject: 'Invoice 1' } });
    expect(viewOf('/messages', '?starting_after=msg_2&from=shop')).toEqual({ kind: 'inbox', filters: { from: 'shop' }, startingAfter: 'msg_2' });
    expect(viewOf('/messages', 'ending_before=msg_9')).toEqual({ kind: 'inbox', filters: {}, endingBefore: 'msg_9' });
    // Both cursors: the API refuses them; the mirror keeps the older page.
    expect(viewOf('/messages', '?starting_after=msg_2&ending_before=msg_1')).toEqual({ kind: 'inbox', filters: {}, startingAfter: 'msg_2' });
  });

  it('shows a message at its path, on the tab its path or fragment names', () => {
    expect(viewOf('/messages/msg_0001abc')).toEqual({ kind: 'message', id: 'msg_0001abc', tab: null, attachment: null });
    expect(viewOf('/messages/msg_1', '', '#text')).toEqual({ kind: 'message', id: 'msg_1', tab: 'text', attachment: null });
    expect(viewOf('/messages/msg_1', '', '#headers')).toMatchObject({ tab: 'headers' });
    expect(viewOf('/messages/msg_1', '', '#nonsense')).toMatchObject({ tab: null });
    expect(viewOf('/messages/msg_1/raw')).toEqual({ kind: 'message', id: 'msg_1', tab: 'raw', attachment: null });
    expect(viewOf('/messages/msg_1/attachments')).toEqual({ kind: 'message', id: 'msg_1', tab: 'attachments', attachment: null });
    expect(viewOf('/messages/msg_1/attachments/2')).toEqual({ kind: 'message', id: 'msg_1', tab: 'attachments', attachment: 2 });
    expect(viewOf('/messages/msg%20x')).toMatchObject({ id: 'msg x' });
  });

  it('opens the inbox from /mirror/ and the bare twin path, and names what it does not know', () => {
    for (const path of ['', '/', '/mirror', '/mirror/', '/mirror/assets/app.js']) expect(viewOf(path), path).toEqual({ kind: 'home' });
    for (const path of ['/twin/store/messages', '/messages/msg_1/attachments/x', '/messages/%E0%A4%A/raw', '/message']) {
      expect(viewOf(path), path).toEqual({ kind: 'unknown', path });
    }
  });

  it('writes each view back to the address it is read from', () => {
    const views: [View, string, string][] = [
      [{ kind: 'inbox', filters: { to: 'Bob B', subject: 'x&y' } }, inboxPath({ to: 'Bob B', subject: 'x&y' }), '/messages?to=Bob+B&subject=x%26y'],
      [{ kind: 'inbox', filters: {}, startingAfter: 'msg_2' }, inboxPath({}, { startingAfter: 'msg_2' }), '/messages?starting_after=msg_2'],
      [{ kind: 'inbox', filters: { from: 'a' }, endingBefore: 'msg_1' }, inboxPath({ from: 'a' }, { endingBefore: 'msg_1' }), '/messages?from=a&ending_before=msg_1'],
      [{ kind: 'message', id: 'msg 1', tab: null, attachment: null }, messagePath('msg 1'), '/messages/msg%201'],
      [{ kind: 'message', id: 'msg_1', tab: 'source', attachment: null }, messagePath('msg_1', 'source'), '/messages/msg_1#source'],
      [{ kind: 'message', id: 'msg_1', tab: 'raw', attachment: null }, messagePath('msg_1', 'raw'), '/messages/msg_1/raw'],
      [{ kind: 'message', id: 'msg_1', tab: 'attachments', attachment: 3 }, messagePath('msg_1', 'attachments', 3), '/messages/msg_1/attachments/3'],
    ];
    for (const [view, address, expected] of views) {
      expect(address).toBe(expected);
      const url = new URL(address, 'http://x.test');
      expect(viewOf(url.pathname, url.search, url.hash)).toEqual(view);
    }
    expect(messagePath('msg_1', 'html')).toBe('/messages/msg_1');
  });
});

describe('the search box', () => {
  it('reads fields, quoted values and plain words (the subject)', () => {
    expect(parseSearch('')).toEqual({});
    expect(parseSearch('invoice')).toEqual({ subject: 'invoice' });
    expect(parseSearch('from:ada@shop.test to:"Bob B" weekly news')).toEqual({ from: 'ada@shop.test', to: 'Bob B', subject: 'weekly news' });
    expect(parseSearch('subject:"order 12" shipped FROM:shop')).toEqual({ from: 'shop', subject: 'order 12 shipped' });
    // An unknown field is a word of the subject; an empty value filters nothing.
    expect(parseSearch('re:hello to:')).toEqual({ subject: 're:hello' });
  });

  it('shows the filters back as text that reads as the same filters', () => {
    for (const filters of [{}, { subject: 'invoice' }, { from: 'ada', to: 'Bob B', subject: 'weekly news' }, { subject: 're:hello' }]) {
      expect(parseSearch(searchText(filters))).toEqual(filters);
    }
  });
});
