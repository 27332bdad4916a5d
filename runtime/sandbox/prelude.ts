/**
 * The script every new context runs before anything else. It evaluates to functions the host
 * keeps, made before any guest code ran:
 * - `invoke(fn, input, encoded)` calls global `fn`: one crossing per call, and a global that is
 *   missing, not a function or a throwing getter is an ordinary guest exception. A result that
 *   is not a string is a guest error.
 * - `describe(e)` names a thrown value as JSON `[name, message]` for the error the host returns.
 * - `installHost(raw)` defines `__host_call(op, argJson)` over the host's raw function.
 * - `installBytes(raw, sliced)` defines `__host_bytes(op, arg, ...bytes)` (hashing, compression:
 *   `HostBytes` in sandbox.ts) over the host's raw function. Each input must be a Uint8Array; with
 *   `sliced` (QuickJS, whose host reads whole ArrayBuffers) a view into a larger buffer is copied
 *   out first, so only its own bytes cross. The answer is a Uint8Array, or `{ bytes, n }` when the
 *   host answers a number beside the bytes.
 *
 * Strings cross the boundary as NUL-terminated UTF-8 (quickjs-emscripten's `newString` and
 * `getString`), so a string holding U+0000 or a lone surrogate would be cut or mangled. Such a
 * string crosses JSON-encoded instead: `encoded` set on the way in; on the way out, U+0001 and
 * then the JSON text (a string that itself starts with U+0001 is encoded too, so the mark is
 * never ambiguous). Ordinary JSON payloads never hold either, so they cross as they are. Only
 * strings ever cross: the host never reads a property of a guest object, which could run a
 * guest getter or Proxy trap outside the guest's control flow.
 *
 * Also: `Math.random` becomes a fixed-seed generator (mulberry32), writable so that the twin SDK's
 * guest runtime can install the world's seeded generator on every call. `Date` stays QuickJS's
 * own: its clock and time zone come from the instance's imports, which `wasm.ts` pins to epoch 0
 * and UTC, so it reads epoch 0 until a guest runtime replaces it (it is writable), and no copy of
 * it anywhere can read the host's clock.
 *
 * A guest that poisons its own intrinsics can only break its own boundary: the host checks the
 * type of everything it receives.
 */
export const PRELUDE_SOURCE = `(function () {
  'use strict';
  var g = globalThis;
  var TE = TypeError;
  var P = Promise;
  var stringify = JSON.stringify;
  var parse = JSON.parse;
  var toStr = String;
  var imul = Math.imul;
  var U8 = Uint8Array;
  var AB = ArrayBuffer;
  var apply = Reflect.apply;
  var isArray = Array.isArray;
  // A Uint8Array of any realm (a trusted realm gets the host's back from __host_bytes).
  var typedTag = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(U8.prototype), Symbol.toStringTag).get;
  function isBytes(v) {
    return v !== null && typeof v === 'object' && apply(typedTag, v, []) === 'Uint8Array';
  }
  // The host's answer as this realm's Uint8Array, over the same memory.
  function own(x) {
    return x instanceof AB ? new U8(x) : new U8(x.buffer, x.byteOffset, x.byteLength);
  }
  // Native checks: a regular expression here cost ~60 µs per 1 KB in the interpreter.
  function unsafe(s) {
    return s.indexOf('\\0') !== -1 || s.charCodeAt(0) === 1 || !s.isWellFormed();
  }
  var seed = 0x2545f491;
  function random() {
    seed = (seed + 0x6d2b79f5) | 0;
    var t = imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  Object.defineProperty(Math, 'random', { value: random, writable: true, configurable: true, enumerable: false });
  function out(r) {
    if (typeof r !== 'string') throw new TE('the function returned ' + (r === null ? 'null' : 'a ' + typeof r) + ', not a string');
    return unsafe(r) ? '\\u0001' + stringify(r) : r;
  }
  function invoke(fn, input, encoded) {
    var f = g[fn];
    if (typeof f !== 'function') throw new TE("global '" + fn + "' is not a function");
    var r = f(encoded === 1 ? parse(input) : input);
    if (r instanceof P) return r.then(out);
    return out(r);
  }
  function describe(e) {
    var name = '';
    var message = '';
    try {
      if (e !== null && (typeof e === 'object' || typeof e === 'function')) {
        var n = e.name;
        var m = e.message;
        if (typeof n === 'string') name = n;
        message = typeof m === 'string' ? m : toStr(e);
      } else {
        message = toStr(e);
      }
    } catch (_) {
      message = 'a thrown value that cannot be described';
    }
    if (typeof message !== 'string') message = 'a thrown value that cannot be described';
    return stringify([name.slice(0, 200), message.slice(0, 4096)]);
  }
  function installHost(raw) {
    g.__host_call = function __host_call(op, arg) {
      if (typeof op !== 'string' || typeof arg !== 'string') throw new TE('__host_call(op, argJson) takes two strings');
      var r = unsafe(op) || unsafe(arg) ? raw(stringify(op), stringify(arg), 1) : raw(op, arg);
      return r.charCodeAt(0) === 1 ? parse(r.slice(1)) : r;
    };
  }
  function installBytes(raw, sliced) {
    g.__host_bytes = function __host_bytes(op, arg) {
      if (typeof op !== 'string' || typeof arg !== 'number') throw new TE('__host_bytes(op, arg, ...bytes) takes a string, a number and Uint8Arrays');
      var args = [op, arg];
      for (var i = 2; i < arguments.length; i++) {
        var v = arguments[i];
        if (!isBytes(v)) throw new TE('__host_bytes: input ' + (i - 2) + ' is not a Uint8Array');
        if (!sliced) args.push(v);
        else {
          var buf = v.buffer;
          args.push(v.byteOffset === 0 && v.byteLength === buf.byteLength ? buf : buf.slice(v.byteOffset, v.byteOffset + v.byteLength));
        }
      }
      var r = apply(raw, undefined, args);
      return isArray(r) ? { bytes: own(r[0]), n: r[1] } : own(r);
    };
  }
  return { invoke: invoke, describe: describe, installHost: installHost, installBytes: installBytes };
})()`;
