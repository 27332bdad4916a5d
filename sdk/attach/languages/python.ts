/**
 * Python under `kit world attach`: a sitecustomize.py first on PYTHONPATH (python-sitecustomize.ts),
 * which Python imports at start-up, before the app. When the app imports one of them, it makes
 * the libraries that check certificates against a CA file of their own (stripe's bundled
 * `ca-certificates.crt`, httplib2's `CA_CERTS`, `certifi.where()`) trust the world's CA as well
 * as their own, and the clients that ignore HTTPS_PROXY (a plain urllib3 PoolManager, aiohttp's
 * ClientSession) honour it. Then it runs the sitecustomize Python would have run without kit
 * (the next on sys.path).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { PATCHES_PY, SITECUSTOMIZE_PY } from './python-sitecustomize.js';
import type { AttachContext, AttachLanguage } from './types.js';

export const python: AttachLanguage = {
  name: 'python',
  async prepare(ctx: AttachContext): Promise<void> {
    // A world without a CA has no proxy either: the usual variables say everything there is.
    if (ctx.worldCa === null && ctx.proxyUrl === null) return;
    if (ctx.temp.includes(delimiter)) {
      ctx.warn(`kit: Python is not prepared for the world: the temporary folder ${ctx.temp} has a "${delimiter}" in its path, which PYTHONPATH cannot carry (set TMPDIR to another folder)`);
      return;
    }
    // On PYTHONPATH: sitecustomize.py alone, since everything in that folder is importable by the app.
    const onPath = join(ctx.temp, 'python');
    // Beside it, off the path: the patches, the world's CA and the trust files the patches make.
    const attach = join(ctx.temp, 'python-attach');
    await mkdir(onPath, { mode: 0o700 });
    await mkdir(attach, { mode: 0o700 });
    if (ctx.worldCa !== null) await writeFile(join(attach, 'world-ca.pem'), ctx.worldCa, { mode: 0o600 });
    await writeFile(join(attach, 'kit_attach_patches.py'), PATCHES_PY, { mode: 0o600 });
    await writeFile(join(onPath, 'sitecustomize.py'), SITECUSTOMIZE_PY, { mode: 0o600 });
    // First, so that this sitecustomize is the one Python imports; the user's entries follow.
    const prior = ctx.env['PYTHONPATH'];
    ctx.env['PYTHONPATH'] = prior === undefined || prior === '' ? onPath : `${onPath}${delimiter}${prior}`;
  },
};
