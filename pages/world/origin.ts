/**
 * A branch's own address. A world's origin is `<world>--<org>.<suffix>` (`shop--acme.localhost:8787`
 * locally); a branch is a world of the same org, so its origin is this one with the first label
 * of the host name replaced.
 */

/** The origin of world `org/world` beside `origin` (this world's), or null when it has none or the name is not `org/world`. */
export function worldOrigin(origin: string | null, name: string): string | null {
  if (origin === null) return null;
  const [org, world, ...rest] = name.split('/');
  if (org === undefined || world === undefined || rest.length > 0 || !/^[a-z0-9-]+$/.test(org) || !/^[a-z0-9-]+$/.test(world)) return null;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return null;
  }
  const dot = url.hostname.indexOf('.');
  // As the host names origins: none for a world whose name holds `--`, nor past a DNS label's 63 characters.
  const label = `${world}--${org}`;
  if (dot === -1 || world.includes('--') || label.length > 63) return null;
  url.hostname = `${label}${url.hostname.slice(dot)}`;
  return url.origin;
}
