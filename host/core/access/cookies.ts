/**
 * The session cookie: `kit_session`, HttpOnly, SameSite=Strict, `Path=/`, host-only (no
 * `Domain`: a sibling origin can neither read it nor be sent it), `Secure` on https. It holds
 * an opaque id, never a token.
 */

export const SESSION_COOKIE = 'kit_session';

/**
 * Every `kit_session` value a `Cookie` header carries, in order. A browser sends more than one
 * when another origin of the same site planted one for a parent domain; each is tried, and only
 * one this world issued opens anything.
 */
export function sessionIdsOf(cookie: string | undefined): string[] {
  if (cookie === undefined || !cookie.includes(SESSION_COOKIE)) return [];
  const out: string[] = [];
  for (const part of cookie.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (/^[A-Za-z0-9_-]{1,128}$/.test(value)) out.push(value);
    if (out.length === 4) break;
  }
  return out;
}

export function sessionCookie(id: string, maxAgeMs: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${id}; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}
