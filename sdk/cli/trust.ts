/**
 * `--trust <issuer>` (repeatable) and `TRUSTED_ISSUERS`, as `kit world serve`, `kit host serve`
 * and `kit edge dev` take them: the platforms whose passes open a world's page (docs/passes.md).
 */
import { createPassVerifier, trustedIssuers } from '../../host/core/access/passes.js';
import type { PassVerifier } from '../../host/core/access/passes.js';
import { UsageError } from './args.js';
import type { FlagSpec } from './args.js';

export const TRUST_FLAG: FlagSpec = { name: 'trust', kind: 'list' };

/** The usage lines of `--trust`, indented to `width`. */
export function trustUsage(width: number): string {
  const pad = ' '.repeat(width);
  return [
    `  ${'--trust I'.padEnd(width - 2)}trust passes signed by the platform I: https://platform.example, or on`,
    `${pad}this machine http://127.0.0.1:4460 (kit pass issuer). Repeat it for more;`,
    `${pad}TRUSTED_ISSUERS (comma or space separated) adds its own. Default: none`,
    `${pad}(docs/passes.md)`,
  ].join('\n');
}

/** The issuers of `--trust` and of `TRUSTED_ISSUERS`, as origins, once each. Throws `UsageError` naming the bad one and where it came from. */
export function parseTrust(flags: readonly string[] | undefined, env: Record<string, string | undefined>): string[] {
  const given = env['TRUSTED_ISSUERS'];
  try {
    trustedIssuers(flags ?? [], undefined);
  } catch (e) {
    throw new UsageError(`--trust: ${(e as Error).message}`);
  }
  try {
    trustedIssuers([], given);
  } catch (e) {
    throw new UsageError(`TRUSTED_ISSUERS: ${(e as Error).message}`);
  }
  return trustedIssuers(flags ?? [], given);
}

/** The verifier a Node host checks passes with; null when no issuer is trusted. */
export function passVerifierFor(trusted: readonly string[]): PassVerifier | null {
  return trusted.length === 0 ? null : createPassVerifier({ trusted });
}

/** The `passes` line a serve command prints. */
export function describeTrust(trusted: readonly string[]): string {
  return trusted.length === 0 ? 'none trusted (--trust <issuer>, docs/passes.md)' : `signed by ${trusted.join(', ')}`;
}
