/**
 * The hand-written codecs the twins carried before issue 37, as the bench's baseline. They are no
 * longer in the tree: run.ts writes them from git history (commit 36229f2) into a temporary
 * folder and resolves these names there when it bundles the guest.
 */
declare module 'handwritten:zlib' {
  export function inflate(src: Uint8Array, start?: number, maxOut?: number): { data: Uint8Array; end: number };
}
declare module 'handwritten:hash' {
  export function sha1(...parts: Uint8Array[]): Uint8Array;
  export function sha256(data: Uint8Array): Uint8Array;
  export function hmacSha256(key: Uint8Array, message: Uint8Array): Uint8Array;
}
