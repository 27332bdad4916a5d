/**
 * Twins an admin installs on a host (`PUT /-/twins/<vendor>`), shared by the multi-world host and
 * the edge variant: the upload checked (a script, at most 4 MiB, UTF-8, a vendor id in the path),
 * the bundle loaded in a sandbox lane and its manifest read there (runtime/runner/twin-check.ts,
 * never in V8), the record and the rows every host answers, and the store they are kept in
 * (any `Storage`: the host's LMDB, the edge index's SQLite, which chunks values over 1 MiB).
 *
 * An installed twin is never trusted: its bundle carries no `trusted` flag, so every runner
 * serves it in its world's untrusted lane (QuickJS, with the lane's memory, step and time budgets).
 */
import { KitError } from '../../runtime/errors.js';
import type { UntrustedLane } from '../../runtime/lane/types.js';
import { checkUntrustedTwin, VENDOR_ID } from '../../runtime/runner/twin-check.js';
import type { TwinBundle, TwinManifestJson } from '../../runtime/runner/types.js';
import type { Key, Storage } from '../../runtime/store/index.js';
import { prefixEnd } from '../../runtime/store/keys.js';
import { HostError } from '../errors.js';

/** The largest bundle a host takes (contract: ≤ 4 MiB, the request body limit). */
export const MAX_TWIN_BYTES = 4 * 1024 * 1024;


/** The content types of a script: what `kit twin build` writes is sent as `application/javascript`. */
const SCRIPT_TYPES = new Set(['application/javascript', 'text/javascript', 'application/x-javascript']);

/** What the host keeps of an installed twin beside its bundle. */
export interface InstalledTwinRecord {
  vendor: string;
  version: string;
  /** Hex SHA-256 of the bundle's UTF-8 bytes. */
  sha256: string;
  /** ISO 8601. */
  installedAt: string;
  /** The bundle's size in bytes. */
  bytes: number;
  /** As the sandbox answered it, checked. */
  manifest: TwinManifestJson;
}

/** A row of `GET /-/twins`: a built-in twin or an installed one. */
export interface TwinRow {
  vendor: string;
  version: string;
  protocol: string;
  installed: boolean;
  sha256: string | null;
  installedAt: string | null;
  bytes: number | null;
}

/** `GET /-/twins/<vendor>`: the row, its manifest, and the worlds that serve it. */
export interface TwinDetail extends TwinRow {
  manifest: TwinManifestJson;
  worlds: string[];
}

/** What `PUT /-/twins/<vendor>` answers (201, or 200 when it replaced an earlier install). */
export interface InstallAnswer {
  vendor: string;
  version: string;
  sha256: string;
  installedAt: string;
  manifest: TwinManifestJson;
}

/** `/-/twins` as the admin surface sees it; each host keeps and serves installs its own way. */
export interface TwinAdmin {
  rows(): Promise<TwinRow[]>;
  detail(vendor: string): Promise<TwinDetail>;
  /** Checks, keeps and serves the upload; `replaced` when an earlier install of the vendor was there. */
  install(upload: TwinUpload): Promise<{ answer: InstallAnswer; replaced: boolean }>;
  /** `twin_in_use` while a world serves it. */
  remove(vendor: string): Promise<void>;
}

/** A bundle as it came, before it is loaded. */
export interface TwinUpload {
  vendor: string;
  source: string;
}

export function builtinRow(bundle: TwinBundle): TwinRow {
  return { vendor: bundle.vendor, version: bundle.manifest.version, protocol: bundle.manifest.protocol, installed: false, sha256: null, installedAt: null, bytes: null };
}

export function installedRow(record: InstalledTwinRecord): TwinRow {
  return { vendor: record.vendor, version: record.version, protocol: record.manifest.protocol, installed: true, sha256: record.sha256, installedAt: record.installedAt, bytes: record.bytes };
}

export function answerOf(record: InstalledTwinRecord): InstallAnswer {
  return { vendor: record.vendor, version: record.version, sha256: record.sha256, installedAt: record.installedAt, manifest: record.manifest };
}

/** The bundle a runner serves: no `trusted` flag, so always the world's untrusted lane; its status says it was installed. */
export function bundleOf(record: InstalledTwinRecord, source: string): TwinBundle {
  return { vendor: record.vendor, source, manifest: record.manifest, origin: { kind: 'installed' } };
}

/** The vendor id a path segment names, percent-decoded; else `invalid_vendor`. */
export function vendorSegment(raw: string | undefined): string {
  let decoded = '';
  try {
    decoded = decodeURIComponent(raw ?? '');
  } catch {
    // Reported below as not a vendor id.
  }
  if (!VENDOR_ID.test(decoded)) {
    throw new HostError('invalid_vendor', `the path names no vendor id: a vendor id is 2 to 40 lower-case letters, digits and dashes, starting with a letter (${VENDOR_ID.source})`, { param: 'vendor' });
  }
  return decoded;
}

/** Refuses a body whose declared length is over the limit, before it is read. */
export function checkDeclaredLength(contentLength: string | undefined): void {
  if (contentLength === undefined) return;
  const n = Number(contentLength);
  if (Number.isFinite(n) && n > MAX_TWIN_BYTES) throw tooLarge(n);
}

function tooLarge(bytes: number): HostError {
  return new HostError('twin_too_large', `the bundle is ${bytes} bytes; a host takes at most ${MAX_TWIN_BYTES} (4 MiB)`, { limit: MAX_TWIN_BYTES });
}

/** The body of `PUT /-/twins/<vendor>`: a script (content type), at most 4 MiB, UTF-8 text. */
export function readTwinUpload(vendor: string, contentType: string | undefined, body: Uint8Array | undefined): TwinUpload {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (!SCRIPT_TYPES.has(type)) {
    throw new KitError('unsupported_media_type', `send the bundle kit twin build writes as content-type: application/javascript (got ${contentType === undefined ? 'none' : JSON.stringify(contentType)})`);
  }
  const bytes = body ?? new Uint8Array(0);
  if (bytes.byteLength > MAX_TWIN_BYTES) throw tooLarge(bytes.byteLength);
  if (bytes.byteLength === 0) throw new KitError('invalid_twin', `installed twin ${vendor}: the body is empty; send the bundle kit twin build writes`, { label: `installed twin ${vendor}`, field: '' });
  let source: string;
  try {
    source = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new KitError('invalid_twin', `installed twin ${vendor}: the body is not UTF-8 text, so not a script`, { label: `installed twin ${vendor}`, field: '' });
  }
  return { vendor, source };
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Loads the upload in `lane` (its budgets end a bundle that loops or allocates while it loads),
 * reads and checks its manifest there, and makes its record. A built-in vendor is `twin_exists`;
 * a manifest naming another vendor than the path is `twin_vendor_mismatch`.
 */
export async function prepareInstall(lane: UntrustedLane, upload: TwinUpload, builtins: readonly string[], now: () => number = Date.now): Promise<{ record: InstalledTwinRecord; bundle: TwinBundle }> {
  const { vendor, source } = upload;
  if (builtins.includes(vendor)) {
    throw new HostError('twin_exists', `${vendor} is a built-in twin of this host; an installed twin takes a vendor id of its own`, { vendor });
  }
  const manifest = await checkUntrustedTwin(lane, source, { label: `installed twin ${vendor}`, served: builtins });
  if (manifest.vendor !== vendor) {
    throw new HostError('twin_vendor_mismatch', `the bundle's manifest names the vendor ${manifest.vendor}, the path ${vendor}: PUT it at /-/twins/${manifest.vendor}`, { vendor, manifestVendor: manifest.vendor });
  }
  const record: InstalledTwinRecord = {
    vendor,
    version: manifest.version,
    sha256: await sha256Hex(source),
    installedAt: new Date(now()).toISOString(),
    bytes: new TextEncoder().encode(source).byteLength,
    manifest,
  };
  return { record, bundle: bundleOf(record, source) };
}

/**
 * The lane a host checks installs in, made on first use. A bundle refused while it loaded may
 * leave the sandbox's memory grown to its cap (a runtime that hit its own limit frees the
 * objects, not the pages), so the next bundle would be refused for want of memory: after a
 * refusal the lane is closed and the next install gets a fresh one.
 */
export class TwinCheckLane {
  readonly #make: () => UntrustedLane;
  #lane: UntrustedLane | null = null;

  constructor(make: () => UntrustedLane) {
    this.#make = make;
  }

  async prepare(upload: TwinUpload, builtins: readonly string[], now?: () => number): Promise<{ record: InstalledTwinRecord; bundle: TwinBundle }> {
    const lane = (this.#lane ??= this.#make());
    try {
      return await prepareInstall(lane, upload, builtins, now);
    } catch (e) {
      if (e instanceof KitError && e.code === 'invalid_twin') {
        this.#lane = null;
        await lane.close();
      }
      throw e;
    }
  }

  async close(): Promise<void> {
    const lane = this.#lane;
    this.#lane = null;
    await lane?.close();
  }
}

/** The worlds (by name) whose vendors include `vendor`, as `twin_in_use` names them. */
export function inUse(vendor: string, worlds: readonly string[]): HostError {
  return new HostError('twin_in_use', `${vendor} is served by ${worlds.length === 1 ? 'the world' : 'the worlds'} ${worlds.join(', ')}; remove ${worlds.length === 1 ? 'it' : 'them'} first`, { vendor, worlds });
}

export function notInstalled(vendor: string): KitError {
  return new KitError('unknown_twin', `no twin ${vendor} is installed on this host (GET /-/twins lists them)`, { vendor });
}

export function builtinNotRemoved(vendor: string): HostError {
  return new HostError('twin_builtin', `${vendor} is a built-in twin of this host: it cannot be removed`, { vendor });
}

const RECORDS: Key = ['#host', 'twin'];
const SOURCES: Key = ['#host', 'twin-source'];

/**
 * Installed twins in a `Storage`: `['#host', 'twin', <vendor>]` → record,
 * `['#host', 'twin-source', <vendor>]` → the bundle's text. Both written in one transaction, so a
 * reader never sees a record without its bundle, nor a replaced bundle beside the old record.
 */
export class InstalledTwinStore {
  readonly #storage: Storage;

  constructor(storage: Storage) {
    this.#storage = storage;
  }

  list(): InstalledTwinRecord[] {
    return [...this.#storage.range<InstalledTwinRecord>({ start: RECORDS, end: prefixEnd(RECORDS) })].map((kv) => kv.value);
  }

  get(vendor: string): InstalledTwinRecord | undefined {
    return this.#storage.get<InstalledTwinRecord>([...RECORDS, vendor]);
  }

  bundle(vendor: string): TwinBundle | undefined {
    const record = this.get(vendor);
    const source = this.#storage.get<string>([...SOURCES, vendor]);
    return record === undefined || source === undefined ? undefined : bundleOf(record, source);
  }

  /** Keeps the record and its bundle; answers whether one was there before. Durable once `storage.durable()` resolves. */
  put(record: InstalledTwinRecord, source: string): boolean {
    return this.#storage.transact((tx) => {
      const before = tx.get([...RECORDS, record.vendor]) !== undefined;
      tx.put([...SOURCES, record.vendor], source);
      tx.put([...RECORDS, record.vendor], record);
      return before;
    });
  }

  remove(vendor: string): void {
    this.#storage.transact((tx) => {
      tx.remove([...RECORDS, vendor]);
      tx.remove([...SOURCES, vendor]);
    });
  }
}
