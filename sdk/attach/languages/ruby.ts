/**
 * Ruby: `RUBYOPT=-r<file>` loads a small file before the app (the counterpart of Node's
 * `--import twinkit/attach`) that fixes what Ruby's `Net::HTTP` does not take from the usual
 * variables. The default store already reads `SSL_CERT_FILE` (OpenSSL's default paths), but:
 *
 * - `Net::HTTP` looks its proxy up in `http_proxy` whatever the scheme (`URI::HTTP.new("http", …)
 *   .find_proxy` in net/http.rb), so `HTTPS_PROXY` alone never reaches it. Setting `http_proxy`
 *   for everyone would send every tool's plain-HTTP requests to a proxy that answers only
 *   CONNECT; the file makes a TLS connection ask `https_proxy` (and `no_proxy`), as curl,
 *   Python and Go do.
 * - stripe-ruby names no proxy (`Net::HTTP.new(host, port, nil, nil, nil, nil)`) and trusts a CA
 *   file of its own (`connection.cert_store = config.ca_store`). A TLS connection to a twinned host
 *   that names no proxy goes through the world's, and the world's CA is added to a store the app
 *   built itself (or made from its `ca_file`), beside the app's own roots.
 *
 * A path with white space cannot go in RUBYOPT (it splits on spaces): kit warns and sets nothing.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AttachContext, AttachLanguage } from './types.js';

/** A Ruby single-quoted literal: only `\` and `'` are special there, so `#{…}` stays text. */
function rubyString(value: string): string {
  return `'${value.replace(/[\\']/g, '\\$&')}'`;
}

/** The file RUBYOPT loads. Any failure in it warns and leaves Ruby as it was: the app still runs. */
export function rubyHook(hosts: readonly string[], worldCaFile: string | null, proxy: boolean): string {
  return `# Written by \`kit world attach\` for one run (docs/attach.md, "Apps in other languages").
# Loaded through RUBYOPT before the app: Net::HTTP's TLS connections reach the world's twins.
begin
  require 'net/http'
  module KitWorldAttach
    # The hosts the world's proxy answers from its twins.
    HOSTS = [${hosts.map((h) => rubyString(h.toLowerCase())).join(', ')}].freeze
    # The world's CA alone, added to a store an app builds itself (nil: the world gave none).
    WORLD_CA = ${worldCaFile === null ? 'nil' : rubyString(worldCaFile)}
    PROXY = ${proxy ? 'true' : 'false'}

    def self.trust(store)
      return store if WORLD_CA.nil? || store.instance_variable_defined?(:@kit_world_ca)
      store.add_file(WORLD_CA)
      store.instance_variable_set(:@kit_world_ca, true)
      store
    rescue StandardError => e
      warn "kit attach (ruby): could not add the world's CA to the app's certificate store: #{e.message}"
      store
    end

    module NetHTTP
      # Ruby reads http_proxy whatever the scheme; a TLS connection reads https_proxy and no_proxy.
      def proxy_uri
        return super unless PROXY && use_ssl? && @proxy_from_env
        if @proxy_uri.nil?
          @proxy_uri = URI::HTTPS.new('https', nil, address, port, nil, nil, nil, nil, nil).find_proxy || false
        end
        @proxy_uri || nil
      end

      # Asked before every connection (connect, and each request's path): an SDK that names no
      # proxy (stripe-ruby) still sends a twinned host to the world.
      def proxy?
        if PROXY && use_ssl? && !@proxy_from_env && @proxy_address.nil? && HOSTS.include?(address.to_s.downcase)
          @proxy_from_env = true
          @proxy_uri = nil
        end
        super
      end

      def connect
        if use_ssl?
          if @cert_store
            KitWorldAttach.trust(@cert_store)
          elsif @ca_file || @ca_path
            # The app's file is loaded into this store too (OpenSSL adds ca_file to the context's store).
            @cert_store = KitWorldAttach.trust(OpenSSL::X509::Store.new)
          end
        end
        super
      end
    end
  end
  Net::HTTP.prepend(KitWorldAttach::NetHTTP)
rescue StandardError, LoadError => e
  warn "kit attach (ruby): Net::HTTP is left as it is: #{e.message}"
end
`;
}

export const ruby: AttachLanguage = {
  name: 'ruby',
  async prepare(ctx: AttachContext): Promise<void> {
    if (ctx.proxyUrl === null && ctx.worldCa === null) return;
    const dir = join(ctx.temp, 'ruby');
    const hook = join(dir, 'kit_attach.rb');
    if (/\s/.test(hook)) {
      ctx.warn(`kit: Ruby is not prepared for the world: the temporary folder ${dir} has white space in its path, which RUBYOPT cannot carry (set TMPDIR to another folder)`);
      return;
    }
    await mkdir(dir, { mode: 0o700 });
    let worldCaFile: string | null = null;
    if (ctx.worldCa !== null) {
      worldCaFile = join(dir, 'world-ca.pem');
      await writeFile(worldCaFile, ctx.worldCa, { mode: 0o600 });
    }
    await writeFile(hook, rubyHook(ctx.hosts, worldCaFile, ctx.proxyUrl !== null), { mode: 0o600 });
    // The user's own options (bundler's -rbundler/setup, -W0, …) stay, before ours.
    const prior = ctx.baseEnv['RUBYOPT']?.trim() ?? '';
    ctx.env['RUBYOPT'] = prior === '' ? `-r${hook}` : `${prior} -r${hook}`;
  },
};
