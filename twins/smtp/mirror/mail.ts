/**
 * What the mirror does with a message's content in the browser: addresses as a person reads
 * them, files saved from the mailbox API with the session, and a message's HTML made safe to
 * show (see `framedHtml`).
 */
import { ApiError } from '../../../pages/ui/index.js';
import type { AttachmentInfo } from '../twin/resources/mailbox.js';
import type { MailAddress } from '../twin/lib/mime.js';

/** `Ada <ada@x.test>`, or the bare address when there is no name. */
export function addressText(a: MailAddress): string {
  return a.name === '' ? a.address : `${a.name} <${a.address}>`;
}

/** A list's first name (or address) and how many more: `Bob +2`. */
export function firstOf(list: MailAddress[], fallback: string[] = []): string {
  const first = list[0];
  const name = first === undefined ? fallback[0] : first.name === '' ? first.address : first.name;
  const total = list.length > 0 ? list.length : fallback.length;
  if (name === undefined) return '—';
  return total > 1 ? `${name} +${total - 1}` : name;
}

/** The bytes at `url` on this origin, with the session; an `ApiError` when the twin refuses. */
export async function fetchBlob(url: string): Promise<Blob> {
  let res: Response;
  try {
    res = await fetch(url, { credentials: 'same-origin' });
  } catch (e) {
    throw new ApiError(0, 'network', `GET ${url} did not reach the host: ${String(e)}`);
  }
  if (!res.ok) {
    const text = await res.text();
    let code = `http_${res.status}`;
    let message = `GET ${url} answered ${res.status}`;
    try {
      const e = (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
      code = e?.code ?? code;
      message = e?.message ?? message;
    } catch {
      // not JSON: the status says it
    }
    throw new ApiError(res.status, code, message);
  }
  return res.blob();
}

/**
 * Saves the file at `url` as `filename`. Fetched (the session rides along) and handed to the
 * browser as a blob, rather than a link to the URL: a browser opening a vendor path gets the
 * mirror's page from the host, not the file.
 */
export async function saveFile(url: string, filename: string): Promise<void> {
  const blob = await fetchBlob(url);
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = filename;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  // The download has taken the blob by the next turn; the URL is not needed after.
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}

/** A name to save an attachment under: its own, else one made from its place and type. */
export function attachmentName(a: AttachmentInfo): string {
  if (a.filename !== null && a.filename.trim() !== '') return a.filename;
  const ext = /^[a-z]+\/([a-z0-9.+-]+)$/i.exec(a.contentType)?.[1]?.replace(/^.*\+/, '') ?? 'bin';
  return `attachment-${a.index + 1}.${ext}`;
}

function dataUrl(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

/** Inline images larger than this stay out of the frame (and a message's together beyond INLINE_TOTAL). */
const INLINE_EACH = 2_000_000;
const INLINE_TOTAL = 8_000_000;

/**
 * The message's inline images (`cid:` references, the `Content-ID` of an attached part) as
 * `data:` URLs, fetched with the session: the frame that shows the HTML has an origin of its
 * own and may load nothing, so it is handed the pictures. Images too large are left out.
 */
export async function inlineImages(attachments: AttachmentInfo[], urlOf: (index: number) => string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let total = 0;
  for (const a of attachments) {
    if (a.contentId === null || a.contentId === '' || !a.contentType.startsWith('image/') || a.size > INLINE_EACH || total + a.size > INLINE_TOTAL) continue;
    total += a.size;
    out.set(a.contentId, await dataUrl(await fetchBlob(urlOf(a.index))));
  }
  return out;
}

/**
 * What the frame shows: the message's HTML with its `cid:` images replaced by `data:` URLs,
 * after a policy of its own. The frame is `sandbox` without `allow-scripts` or
 * `allow-same-origin` (no script runs; the document has an opaque origin, so it cannot read the
 * world's pages or their session), and this policy lets it load no resource at all but the
 * `data:` images and its own inline styles: a remote image (a tracking pixel) is never fetched.
 * Links open in a new tab (`<base target>`), outside the frame.
 */
export function framedHtml(html: string, images: Map<string, string>): string {
  let body = html;
  for (const [cid, url] of images) body = body.split(`cid:${cid}`).join(url);
  const policy = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:";
  return `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${policy}"><base target="_blank">${body}`;
}

/**
 * How many images in the HTML point outside the message (not `cid:` nor `data:`): said, never
 * loaded. Read with `DOMParser`, whose document runs nothing and fetches nothing, in one pass.
 */
export function remoteImages(html: string): number {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  let n = 0;
  for (const img of doc.querySelectorAll('img[src]')) {
    if (!/^\s*(cid|data):/i.test(img.getAttribute('src') ?? '')) n++;
  }
  return n;
}
