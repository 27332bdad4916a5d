// Placeholder until the outbound branch lands (its version replaces this file whole).
export function checkDestinationUrl(url: string, options: { loopback: boolean }): { ok: URL } | { code: 'destination_refused'; message: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { code: 'destination_refused', message: 'not a URL' };
  }
  const loopback = u.hostname === '127.0.0.1' || u.hostname === 'localhost' || u.hostname === '[::1]';
  if (u.protocol === 'https:' && !loopback) return { ok: u };
  if (loopback && options.loopback) return { ok: u };
  return { code: 'destination_refused', message: 'refused' };
}
