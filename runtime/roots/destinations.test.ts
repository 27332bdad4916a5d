import { describe, expect, it } from 'vitest';
import { KitError } from '../errors.js';
import { addressRefusal, checkDestinationUrl, classifyAddress, prepareOutboundCall } from './destinations.js';

const STRICT = { loopback: false };
const LOCAL = { loopback: true };

/** The refusal's message, or 'ok' with the host the URL reaches. */
function outcome(url: string, options = STRICT): string {
  const r = checkDestinationUrl(url, options);
  return 'ok' in r ? `ok ${r.ok.host}` : r.message;
}

describe('checkDestinationUrl', () => {
  it('passes https URLs to public names and addresses, as parsed', () => {
    const r = checkDestinationUrl('https://api.stripe.com/v1/customers?limit=3', STRICT);
    expect('ok' in r && r.ok.href).toBe('https://api.stripe.com/v1/customers?limit=3');
    for (const url of ['https://api.github.com/repos/a/b', 'https://API.Stripe.COM.', 'https://8.8.8.8:8443/', 'https://[2606:4700:4700::1111]/', 'https://ａｐｉ.stripe.com/', 'https://[64:ff9b::808:808]/', 'https://[::ffff:8.8.8.8]/']) {
      expect([url, outcome(url).startsWith('ok ')]).toEqual([url, true]);
    }
    // A backslash is a slash to the WHATWG parser: this one goes to api.stripe.com, the @ is in the path.
    expect(outcome('https://api.stripe.com\\@10.0.0.1/')).toBe('ok api.stripe.com');
  });

  it('refuses a URL that is not https, or not a URL', () => {
    expect(outcome('http://api.stripe.com/')).toMatch(/must be an https URL \(http is allowed to loopback only/);
    expect(outcome('ftp://api.stripe.com/')).toBe('the destination must be an https URL, not ftp:');
    expect(outcome('file:///etc/passwd')).toBe('the destination must be an https URL, not file:');
    expect(outcome('javascript:alert(1)')).toBe('the destination must be an https URL, not javascript:');
    expect(outcome('/v1/customers')).toBe('the destination is not an absolute URL');
    expect(outcome('https://')).toBe('the destination is not an absolute URL');
    // Loopback allowed: http only to a loopback host.
    expect(outcome('http://api.stripe.com/', LOCAL)).toMatch(/must be an https URL/);
  });

  it('refuses a user name or password, whatever the host (the userinfo trick included)', () => {
    for (const url of ['https://api.stripe.com@10.0.0.1/', 'https://user:pass@api.stripe.com/', 'https://:sk_live_x@api.stripe.com/', 'https://api.stripe.com%40evil@api.stripe.com/']) {
      expect([url, outcome(url)]).toEqual([url, 'the destination URL carries a user name or password; credentials are sealed, never written in a URL']);
    }
  });

  it('judges every spelling of a loopback, private, link-local or reserved IPv4 address as the address', () => {
    const table: [string, string][] = [
      ['http://2130706433/', 'the destination host 127.0.0.1 is a loopback address; loopback is allowed for local tests only'],
      ['https://0x7f.1/', 'the destination host 127.0.0.1 is a loopback address; loopback is allowed for local tests only'],
      ['https://0177.0.0.1/', 'the destination host 127.0.0.1 is a loopback address; loopback is allowed for local tests only'],
      ['https://127.1/', 'the destination host 127.0.0.1 is a loopback address; loopback is allowed for local tests only'],
      ['https://0x7f000001/', 'the destination host 127.0.0.1 is a loopback address; loopback is allowed for local tests only'],
      ['https://127.0.0.1./', 'the destination host 127.0.0.1 is a loopback address; loopback is allowed for local tests only'],
      ['https://%31%32%37.0.0.1/', 'the destination host 127.0.0.1 is a loopback address; loopback is allowed for local tests only'],
      ['https://①②⑦.0.0.1/', 'the destination host 127.0.0.1 is a loopback address; loopback is allowed for local tests only'],
      ['https://10.0.0.1/', 'the destination host 10.0.0.1 is a private address'],
      ['https://167772161/', 'the destination host 10.0.0.1 is a private address'],
      ['https://172.16.5.4/', 'the destination host 172.16.5.4 is a private address'],
      ['https://192.168.1.1:8443/admin', 'the destination host 192.168.1.1 is a private address'],
      ['https://100.64.0.1/', 'the destination host 100.64.0.1 is a shared (carrier-grade NAT) address'],
      ['https://169.254.169.254/latest/meta-data/', 'the destination host 169.254.169.254 is the cloud metadata address'],
      ['https://0xa9fea9fe/', 'the destination host 169.254.169.254 is the cloud metadata address'],
      ['https://169.254.1.1/', 'the destination host 169.254.1.1 is a link-local address'],
      ['https://0/', 'the destination host 0.0.0.0 is an unspecified ("this network") address'],
      ['https://0.0.0.0/', 'the destination host 0.0.0.0 is an unspecified ("this network") address'],
      ['https://224.0.0.1/', 'the destination host 224.0.0.1 is a multicast address'],
      ['https://255.255.255.255/', 'the destination host 255.255.255.255 is the broadcast address'],
      ['https://240.1.2.3/', 'the destination host 240.1.2.3 is a reserved address'],
    ];
    for (const [url, message] of table) expect([url, outcome(url)]).toEqual([url, message]);
  });

  it('judges IPv6 literals, and an IPv4 address inside one (mapped, NAT64, 6to4) as that IPv4 address', () => {
    const table: [string, string][] = [
      ['https://[::1]/', 'the destination host [::1] is a loopback address; loopback is allowed for local tests only'],
      ['https://[::]/', 'the destination host [::] is an unspecified address'],
      ['https://[::ffff:169.254.169.254]/', 'the destination host [::ffff:a9fe:a9fe] is the cloud metadata address (169.254.169.254, inside an IPv4-mapped IPv6 address)'],
      ['https://[::ffff:a9fe:a9fe]/', 'the destination host [::ffff:a9fe:a9fe] is the cloud metadata address (169.254.169.254, inside an IPv4-mapped IPv6 address)'],
      ['https://[0:0:0:0:0:ffff:127.0.0.1]/', 'the destination host [::ffff:7f00:1] is a loopback address (127.0.0.1, inside an IPv4-mapped IPv6 address); loopback is allowed for local tests only'],
      ['https://[64:ff9b::10.0.0.1]/', 'the destination host [64:ff9b::a00:1] is a private address (10.0.0.1, inside a NAT64 IPv6 address)'],
      ['https://[2002:c0a8:101::1]/', 'the destination host [2002:c0a8:101::1] is a private address (192.168.1.1, inside a 6to4 IPv6 address)'],
      ['https://[::127.0.0.1]/', 'the destination host [::7f00:1] is an IPv4-compatible address (deprecated)'],
      ['https://[fe80::1]/', 'the destination host [fe80::1] is a link-local address'],
      ['https://[fd00:ec2::254]/', 'the destination host [fd00:ec2::254] is the cloud metadata address'],
      ['https://[fc00::1]/', 'the destination host [fc00::1] is a private (unique local) address'],
      ['https://[fd12:3456::1]/', 'the destination host [fd12:3456::1] is a private (unique local) address'],
      ['https://[ff02::1]/', 'the destination host [ff02::1] is a multicast address'],
      ['https://[2001:db8::1]/', 'the destination host [2001:db8::1] is a documentation address'],
      ['https://[4000::1]/', 'the destination host [4000::1] is not a global unicast address'],
    ];
    for (const [url, message] of table) expect([url, outcome(url)]).toEqual([url, message]);
  });

  it('refuses localhost names, metadata names, private-network names and names without a dot', () => {
    const table: [string, string][] = [
      ['https://localhost/', 'the destination host localhost is a loopback name; loopback is allowed for local tests only'],
      ['https://localhost./', 'the destination host localhost. is a loopback name; loopback is allowed for local tests only'],
      ['https://LOCALHOST:4000/', 'the destination host localhost is a loopback name; loopback is allowed for local tests only'],
      ['https://api.stripe.com.localhost/', 'the destination host api.stripe.com.localhost is a loopback name; loopback is allowed for local tests only'],
      ['https://metadata.google.internal/computeMetadata/v1/', 'the destination host metadata.google.internal names a cloud metadata service'],
      ['https://metadata.google.internal./', 'the destination host metadata.google.internal. names a cloud metadata service'],
      ['https://metadata/', 'the destination host metadata names a cloud metadata service'],
      ['https://instance-data/latest/', 'the destination host instance-data names a cloud metadata service'],
      ['https://ip-10-0-0-1.ec2.internal/', 'the destination host ip-10-0-0-1.ec2.internal is a name only a private network resolves'],
      ['https://printer.local/', 'the destination host printer.local is a name only a private network resolves'],
      ['https://router.home.arpa/', 'the destination host router.home.arpa is a name only a private network resolves'],
      ['https://intranet/', 'the destination host intranet has no dot: a local network\'s search domains would resolve it'],
      ['https://example.com../', 'the destination host example.com.. is not a well-formed name'],
    ];
    for (const [url, message] of table) expect([url, outcome(url)]).toEqual([url, message]);
  });

  it('passes loopback, over http too, only where the host allows it, and never the unspecified address', () => {
    for (const url of ['http://127.0.0.1:4000/acme/real/stripe', 'http://2130706433:4000/', 'http://localhost:4000/', 'http://localhost.:4000/', 'http://world--acme.localhost:4000/', 'https://[::1]:4000/', 'http://[::ffff:127.0.0.1]/']) {
      expect([url, outcome(url, LOCAL).startsWith('ok ')]).toEqual([url, true]);
    }
    expect(outcome('http://0.0.0.0:4000/', LOCAL)).toBe('the destination host 0.0.0.0 is an unspecified ("this network") address');
    expect(outcome('http://10.0.0.1/', LOCAL)).toBe('the destination host 10.0.0.1 is a private address');
    expect(outcome('https://169.254.169.254/', LOCAL)).toBe('the destination host 169.254.169.254 is the cloud metadata address');
  });

  it('never echoes the path, query or fragment in a refusal', () => {
    for (const url of ['https://10.0.0.1/secret-path?api_key=sk_live_123#frag', 'http://api.stripe.com/x?api_key=sk_live_123', 'https://localhost/?api_key=sk_live_123', 'https://u:sk_live_123@api.stripe.com/?api_key=sk_live_123']) {
      const message = outcome(url);
      expect(message).not.toMatch(/sk_live_123|secret-path|frag/);
    }
  });
});

describe('classifyAddress', () => {
  it('classes resolved addresses as the network sees them', () => {
    const table: [string, string][] = [
      ['8.8.8.8', 'public'],
      ['172.15.255.255', 'public'],
      ['172.32.0.0', 'public'],
      ['100.63.255.255', 'public'],
      ['100.128.0.0', 'public'],
      ['2606:4700:4700::1111', 'public'],
      ['::ffff:8.8.8.8', 'public'],
      ['127.0.0.1', 'loopback'],
      ['127.255.0.9', 'loopback'],
      ['::1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.0.1', 'private'],
      ['100.64.0.1', 'private'],
      ['fd00::1', 'private'],
      ['64:ff9b::a00:1', 'private'],
      ['169.254.169.254', 'link-local'],
      ['fe80::1%eth0', 'link-local'],
      ['::ffff:a9fe:a9fe', 'link-local'],
      ['0.0.0.0', 'reserved'],
      ['::', 'reserved'],
      ['224.0.0.251', 'reserved'],
      ['ff02::fb', 'reserved'],
      ['240.0.0.1', 'reserved'],
      ['2001:db8::1', 'reserved'],
    ];
    for (const [ip, cls] of table) expect([ip, classifyAddress(ip)]).toEqual([ip, cls]);
  });

  it('throws a TypeError for a name, or text that smuggles one', () => {
    for (const text of ['localhost', 'api.stripe.com', 'evil.com@127.0.0.1', '127.0.0.1/8', '', '1:2:3:4:5:6:7:8:9', 'cafe.face']) {
      expect(() => classifyAddress(text)).toThrow(TypeError);
    }
  });

  it('says why an address is refused at connect time, and passes loopback only where allowed', () => {
    expect(addressRefusal('10.0.0.1', STRICT)).toBe('10.0.0.1 is a private address');
    expect(addressRefusal('127.0.0.1', STRICT)).toBe('127.0.0.1 is a loopback address (loopback is allowed for local tests only)');
    expect(addressRefusal('127.0.0.1', LOCAL)).toBeNull();
    expect(addressRefusal('::1', LOCAL)).toBeNull();
    expect(addressRefusal('169.254.169.254', LOCAL)).toBe('169.254.169.254 is the cloud metadata address');
    expect(addressRefusal('93.184.216.34', STRICT)).toBeNull();
  });
});

describe('prepareOutboundCall', () => {
  const limits = { timeoutMs: 1000, maxBytes: 1000 };

  it('names the call by method and origin, and keeps only the headers a caller may set', () => {
    const call = prepareOutboundCall({ method: 'get', url: 'https://api.stripe.com/v1/customers?email=a%40b.c', headers: { Authorization: 'Bearer sk_test_1', Host: 'evil.example', 'Content-Length': '5', Connection: 'upgrade', 'Transfer-Encoding': 'chunked', 'Proxy-Authorization': 'Basic x', Expect: '100-continue', 'Stripe-Version': '2024-06-20' } }, limits, STRICT);
    expect([call.method, call.where, call.url.pathname]).toEqual(['GET', 'GET https://api.stripe.com', '/v1/customers']);
    expect(call.headers).toEqual({ authorization: 'Bearer sk_test_1', 'stripe-version': '2024-06-20' });
  });

  it('throws destination_refused for a refused URL, and a TypeError for limits no caller should pass', () => {
    let caught: unknown;
    try {
      prepareOutboundCall({ method: 'GET', url: 'https://10.0.0.1/?k=sk_live_1', headers: {} }, limits, STRICT);
    } catch (e) {
      caught = e;
    }
    expect(caught instanceof KitError && [caught.code, caught.status, caught.message]).toEqual(['destination_refused', 400, 'the destination host 10.0.0.1 is a private address']);
    for (const bad of [{ timeoutMs: 0, maxBytes: 1 }, { timeoutMs: 1.5, maxBytes: 1 }, { timeoutMs: 1, maxBytes: -1 }, { timeoutMs: Number.NaN, maxBytes: 1 }]) {
      expect(() => prepareOutboundCall({ method: 'GET', url: 'https://api.stripe.com/', headers: {} }, bad, STRICT)).toThrow(TypeError);
    }
  });
});
