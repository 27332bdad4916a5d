/**
 * One message, as Mailpit shows it: who sent it to whom and when, then tabs for its HTML
 * (drawn in a sandboxed frame that runs no script and loads nothing from outside), the HTML's
 * source, the text, the headers, the message as received, and its attachments, each saved
 * with the session. It reads `GET /messages/:id`; the raw message and the files only when asked.
 */
import { useEffect, useState } from 'preact/hooks';
import { bytes, DataTable, DetailList, Empty, ErrorNote, instant, Link, Loading, navigate, Tabs, useLoad, type NavItem, type World } from '../../../pages/ui/index.js';
import type { AttachmentInfo, Message } from '../twin/resources/mailbox.js';
import { addressText, attachmentName, framedHtml, inlineImages, remoteImages, saveFile } from './mail.js';
import { inboxPath, messagePath, type Tab } from './routes.js';

export interface MessageViewProps {
  world: World;
  href: (vendorPath: string) => string;
  id: string;
  /** null: the message's first tab. */
  tab: Tab | null;
  /** The attachment an address named (`…/attachments/<n>`). */
  attachment: number | null;
}

export function MessageView({ world, href, id, tab, attachment }: MessageViewProps) {
  const message = useLoad(() => world.vendor<Message>('smtp', `/messages/${encodeURIComponent(id)}`), [world, id]);
  const [saveError, setSaveError] = useState<unknown>(null);
  const back = (
    <p class="mail-back">
      <Link href={href(inboxPath({}))}>← Inbox</Link>
    </p>
  );
  if (message.data === null) {
    return (
      <>
        {back}
        <ErrorNote error={message.error} what={`Message ${id}`} />
        {message.error === null && <Loading what="the message" />}
      </>
    );
  }
  const m = message.data;
  const current: Tab = tab ?? (m.html !== null ? 'html' : 'text');
  const url = (path: string) => `${world.config.worldUrl}/smtp${path}`;
  const items: NavItem[] = [
    ...(m.html !== null
      ? [
          { id: 'html', label: 'HTML', href: href(messagePath(m.id, 'html')) },
          { id: 'source', label: 'HTML source', href: href(messagePath(m.id, 'source')) },
        ]
      : []),
    { id: 'text', label: 'Text', href: href(messagePath(m.id, 'text')) },
    { id: 'headers', label: 'Headers', href: href(messagePath(m.id, 'headers')), count: m.headers.length },
    { id: 'raw', label: 'Raw', href: href(messagePath(m.id, 'raw')) },
    { id: 'attachments', label: 'Attachments', href: href(messagePath(m.id, 'attachments')), count: m.attachments.length },
  ];

  return (
    <article class="message" aria-labelledby="message-subject">
      {back}
      <header class="message-head">
        <h2 id="message-subject">{m.subject ?? '(no subject)'}</h2>
        <button
          type="button"
          onClick={() => {
            setSaveError(null);
            saveFile(url(`/messages/${encodeURIComponent(m.id)}/raw`), `${m.id}.eml`).catch(setSaveError);
          }}
        >
          Download .eml
        </button>
      </header>
      <ErrorNote error={saveError} what="The message was not saved" />
      <Envelope m={m} />
      {/* Tabs replace the address: a tab is a view of the same message, not a step back. */}
      <Tabs label="Message" items={items} current={current} onSelect={(t) => navigate(href(messagePath(m.id, t as Tab)), { replace: true })} />
      <div class="message-body">
        {current === 'html' && <HtmlPart m={m} url={url} />}
        {current === 'source' && <Pre text={m.html} none="This message has no HTML part." label="HTML source" />}
        {current === 'text' && <Pre text={m.text} none="This message has no text part." label="Text" wrap />}
        {current === 'headers' && <Headers m={m} />}
        {current === 'raw' && <Raw world={world} id={m.id} />}
        {current === 'attachments' && <Attachments m={m} url={url} marked={attachment} />}
      </div>
    </article>
  );
}

/** Who, to whom, when: the message's envelope and address headers. */
function Envelope({ m }: { m: Message }) {
  const list = (addresses: { name: string; address: string }[]) => (addresses.length === 0 ? null : addresses.map(addressText).join(', '));
  return (
    <DetailList
      label="Envelope"
      items={[
        ['From', list(m.from) ?? m.envelope.from],
        ['To', list(m.to)],
        ...(m.cc.length > 0 ? [['Cc', list(m.cc)] as [string, string | null]] : []),
        ...(m.bcc.length > 0 ? [['Bcc', list(m.bcc)] as [string, string | null]] : []),
        ...(m.replyTo.length > 0 ? [['Reply-To', list(m.replyTo)] as [string, string | null]] : []),
        ['Date', m.date === null ? null : instant(m.date)],
        ['Received', instant(m.receivedAt)],
        ['Size', bytes(m.size)],
        { label: 'Message-ID', value: m.messageId, mono: true },
        { label: 'SMTP envelope', value: `MAIL FROM:<${m.envelope.from}> RCPT TO:${m.envelope.to.map((a) => `<${a}>`).join(' ')}`, mono: true },
      ]}
    />
  );
}

/**
 * The HTML in a frame: `sandbox` with no `allow-scripts` and no `allow-same-origin`, `srcdoc`
 * from `framedHtml` (no resource loads but the inline images, handed in as `data:` URLs).
 * `allow-popups` lets a link open in a new tab, outside the frame and the mirror.
 */
function HtmlPart({ m, url }: { m: Message; url: (path: string) => string }) {
  const [images, setImages] = useState<Map<string, string> | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    setImages(null);
    inlineImages(m.attachments, (i) => url(`/messages/${encodeURIComponent(m.id)}/attachments/${i}`)).then(
      (found) => live && setImages(found),
      (e: unknown) => {
        if (!live) return;
        setError(e);
        setImages(new Map());
      },
    );
    return () => {
      live = false;
    };
  }, [m.id]);
  if (m.html === null) return <Empty title="This message has no HTML part." />;
  if (images === null) return <Loading what="the message's images" />;
  const remote = remoteImages(m.html);
  return (
    <>
      <ErrorNote error={error} what="An inline image did not load" />
      {remote > 0 && (
        <p class="hint remote-note">
          {remote} remote {remote === 1 ? 'image is' : 'images are'} not loaded: the mirror fetches nothing a message points to.
        </p>
      )}
      <iframe class="mail-html" title="HTML of the message" sandbox="allow-popups allow-popups-to-escape-sandbox" srcdoc={framedHtml(m.html, images)} />
    </>
  );
}

function Pre({ text, none, label, wrap }: { text: string | null; none: string; label: string; wrap?: boolean }) {
  if (text === null) return <Empty title={none} />;
  return (
    <pre class={wrap === true ? 'mail-pre wrap' : 'mail-pre'} aria-label={label}>
      {text}
    </pre>
  );
}

function Headers({ m }: { m: Message }) {
  return (
    <DataTable
      label="Headers"
      rows={m.headers.map((h, i) => ({ ...h, i }))}
      rowKey={(h) => String(h.i)}
      empty="This message has no headers."
      columns={[
        { title: 'Name', cell: (h) => h.name, mono: true, nowrap: true, width: '14rem' },
        { title: 'Value', cell: (h) => <span class="header-value">{h.value}</span>, mono: true },
      ]}
    />
  );
}

/** The message as received, read when the tab is opened (it may be megabytes). */
function Raw({ world, id }: { world: World; id: string }) {
  const raw = useLoad(() => world.vendor<string>('smtp', `/messages/${encodeURIComponent(id)}/raw`, { headers: { accept: 'message/rfc822' } }), [world, id]);
  if (raw.data === null) return raw.error !== null ? <ErrorNote error={raw.error} what="The raw message did not load" /> : <Loading what="the raw message" />;
  return (
    <pre class="mail-pre" aria-label="Raw message">
      {raw.data}
    </pre>
  );
}

function Attachments({ m, url, marked }: { m: Message; url: (path: string) => string; marked: number | null }) {
  const [error, setError] = useState<unknown>(null);
  const save = (a: AttachmentInfo) => {
    setError(null);
    saveFile(url(`/messages/${encodeURIComponent(m.id)}/attachments/${a.index}`), attachmentName(a)).catch(setError);
  };
  return (
    <>
      <ErrorNote error={error} what="The attachment was not saved" />
      <DataTable
        label="Attachments"
        rows={m.attachments}
        rowKey={(a) => String(a.index)}
        selected={marked === null ? null : String(marked)}
        empty="This message has no attachments."
        columns={[
          { title: 'Name', cell: (a) => a.filename ?? <span class="muted">{attachmentName(a)}</span> },
          { title: 'Type', cell: (a) => a.contentType, mono: true },
          { title: 'Size', cell: (a) => bytes(a.size), align: 'right', nowrap: true },
          { title: 'Shown', cell: (a) => (a.disposition === 'inline' ? `inline${a.contentId === null ? '' : ` (cid:${a.contentId})`}` : 'attached') },
          {
            title: '',
            cell: (a) => (
              <button type="button" aria-label={`Download ${attachmentName(a)}`} onClick={() => save(a)}>
                Download
              </button>
            ),
            nowrap: true,
          },
        ]}
      />
    </>
  );
}
