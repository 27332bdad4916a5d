import { describe, expect, it } from 'vitest';
import { UsageError } from './args.js';
import { parseHostServeArgs } from './host-serve.js';
import { parseServeArgs } from './serve.js';

describe('KIT_OUTBOUND_PROXY', () => {
  it('gives kit world serve and kit host serve the proxy their calls to vendors go through, with its CA', () => {
    const env = { KIT_OUTBOUND_PROXY: 'http://kit:secret@127.0.0.1:3128', KIT_OUTBOUND_CA: '/etc/proxy-ca.pem' };
    const want = { url: 'http://kit:secret@127.0.0.1:3128', caFile: '/etc/proxy-ca.pem' };
    expect((parseServeArgs([], env) as { outboundProxy?: unknown }).outboundProxy).toEqual(want);
    expect((parseHostServeArgs([], env) as { outboundProxy?: unknown }).outboundProxy).toEqual(want);
    expect((parseServeArgs([], {}) as { outboundProxy?: unknown }).outboundProxy).toBeUndefined();
  });

  it('refuses a proxy that is not http://host:port without repeating it (its password)', () => {
    for (const url of ['https://kit:hunter2@proxy.example:3128', 'http://kit:hunter2@proxy.example:3128/path', 'socks5://kit:hunter2@proxy.example:1080']) {
      let thrown: unknown;
      try {
        parseHostServeArgs([], { KIT_OUTBOUND_PROXY: url });
      } catch (e) {
        thrown = e;
      }
      expect(thrown, url).toBeInstanceOf(UsageError);
      expect(String((thrown as Error).message)).not.toContain('hunter2');
    }
  });
});
