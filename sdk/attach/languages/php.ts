/**
 * PHP: one ini file in this run's temporary folder, added to the folders PHP scans through
 * `PHP_INI_SCAN_DIR`, sets `curl.cainfo` to attach's bundle (the usual roots plus the world's CA).
 *
 * The curl extension's libcurl takes its proxy from `https_proxy`/`HTTPS_PROXY` and `no_proxy`
 * itself, but not its roots: it uses the CA file it was built with (Debian's
 * /etc/ssl/certs/ca-certificates.crt) unless `curl.cainfo` names one. `SSL_CERT_FILE` and
 * `CURL_CA_BUNDLE` are read by OpenSSL's default paths and by the curl program, not by libcurl.
 * PHP's own https streams (`file_get_contents`) already trust `SSL_CERT_FILE` (OpenSSL's default
 * paths) and need nothing here; they read no proxy variable at all (docs/attach.md).
 *
 * An empty element in PHP_INI_SCAN_DIR stands for the folder PHP was built with, so the
 * distribution's conf.d (which loads the curl extension on Debian) is still read, then the
 * user's own folders, then ours (read last: it wins for `curl.cainfo`).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import type { AttachContext, AttachLanguage } from './types.js';

/** A path PHP's ini parser reads back as it is: single quotes hold raw text; a quote or a line break cannot be carried. */
function iniPath(path: string): string | null {
  return /['\r\n\0]/.test(path) ? null : `'${path}'`;
}

/** PHP_INI_SCAN_DIR with `dir` scanned last: after the user's folders, or after PHP's own when the user named none. */
export function scanDirs(prior: string | undefined, dir: string): string {
  // Unset: PHP's built-in folder (the empty element), then ours. Set but empty: the user turned
  // scanning off, so only ours. Set: theirs as they wrote them, then ours.
  if (prior === undefined) return `${delimiter}${dir}`;
  if (prior === '') return dir;
  return `${prior}${delimiter}${dir}`;
}

export const php: AttachLanguage = {
  name: 'php',
  async prepare(ctx: AttachContext): Promise<void> {
    if (ctx.caBundle === null) return;
    const dir = join(ctx.temp, 'php');
    const value = iniPath(ctx.caBundle);
    if (value === null || dir.includes(delimiter)) {
      ctx.warn(`kit: PHP's curl extension is not given the world's CA: the temporary folder ${ctx.temp} has a quote, a line break or a "${delimiter}" in its path (set TMPDIR to another folder)`);
      return;
    }
    await mkdir(dir, { mode: 0o700 });
    await writeFile(join(dir, 'zz-kit-attach.ini'), `; Written by \`kit world attach\` for one run (docs/attach.md, "Apps in other languages").\ncurl.cainfo = ${value}\n`, { mode: 0o600 });
    ctx.env['PHP_INI_SCAN_DIR'] = scanDirs(ctx.baseEnv['PHP_INI_SCAN_DIR'], dir);
  },
};
