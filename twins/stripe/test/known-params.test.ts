import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('twin/lib/known-params.ts', () => {
  it('matches what the generator reads from the installed stripe package and coverage.ts', () => {
    const out = execFileSync(process.execPath, ['twins/stripe/tools/gen-known-params.mjs', '--check'], { encoding: 'utf8' });
    expect(out).toContain('is up to date');
  });
});
