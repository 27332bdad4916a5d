/**
 * postal-mime in a guest, for the codec bench: a bundle of its own, since it needs TextEncoder and
 * TextDecoder (with legacy charsets) when it loads, which neither QuickJS nor a node:vm realm has.
 */
import PostalMime from 'postal-mime';

const g = globalThis as Record<string, unknown>;
let mailBytes = new Uint8Array(0);

g.loadMail = (latin1: string): string => {
  mailBytes = new Uint8Array(latin1.length);
  for (let i = 0; i < latin1.length; i++) mailBytes[i] = latin1.charCodeAt(i);
  return String(mailBytes.length);
};

g.parseMailPostal = async (): Promise<string> => {
  const m = await PostalMime.parse(mailBytes, { attachmentEncoding: 'base64' });
  return `${m.attachments.length} attachments, text ${m.text?.length ?? 0}, html ${m.html?.length ?? 0}, subject ${m.subject}`;
};
