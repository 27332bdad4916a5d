/**
 * The guest side of a check: JavaScript appended to every compiled check script. It runs in
 * the check's own sandbox context (nothing of the world but what `__host_call` answers) and
 * defines the two globals the runner calls:
 *
 * - `__kit_check_name()` → the check's name as plain text; it throws (a guest error, with the
 *   reason) when the module exports no usable check (`{ name, run }` as `check` or `default`);
 * - `__kit_check_run(inputJson)` with `{ entry, twin, world }` → `{ pass, failures }`:
 *   one call per (check, entry), so verifying a log is one cheap call per entry.
 *
 * The tree is read-only (`get`, `list`, `count` through `__host_call`; writes throw). Kept as
 * plain ES2020 text, not TypeScript compiled at run time, so no build step runs per check.
 */

/** The global the compiled check module (an object of its exports) is assigned to. */
export const CHECK_MODULE_GLOBAL = '__kit_check_module';

/** Most failures one run reports, and the longest message kept: a check cannot flood the report. */
export const MAX_FAILURES = 100;
export const MAX_FAILURE_LENGTH = 2000;

export const CHECK_GUEST_SOURCE = `
;(function () {
  'use strict';
  var g = globalThis;
  var mod = g.${CHECK_MODULE_GLOBAL};
  var MAX_FAILURES = ${MAX_FAILURES};
  var MAX_LENGTH = ${MAX_FAILURE_LENGTH};

  function describe(e) {
    try {
      if (e instanceof Error) return String(e.message);
      return String(e);
    } catch (_) {
      return 'a value that cannot be described';
    }
  }

  function pick() {
    var c;
    try {
      c = mod && (mod.check !== undefined ? mod.check : mod.default);
    } catch (e) {
      return { error: 'reading the exported check threw: ' + describe(e) };
    }
    if (!c || (typeof c !== 'object' && typeof c !== 'function')) return { error: 'the module exports no check: export const check = { name, run(entry, tree) } (or export default)' };
    if (typeof c.name !== 'string' || c.name === '') return { error: 'the exported check has no name (a non-empty string)' };
    if (typeof c.run !== 'function') return { error: 'the exported check has no run(entry, tree) function' };
    return { check: c };
  }

  function host(op, arg) {
    var fn = g.__host_call;
    if (typeof fn !== 'function') throw new Error('the tree is not available here');
    return JSON.parse(fn(op, JSON.stringify(arg)));
  }

  function name(what, v) {
    if (typeof v !== 'string' || v === '') throw new TypeError('tree.' + what + ' must be a non-empty string');
    return v;
  }

  function refuse(op) {
    return function () {
      throw new TypeError('tree.' + op + ': a check reads the tree, it cannot write');
    };
  }

  var tree = Object.freeze({
    get: function (type, id) {
      var v = host('get', { type: name('get: type', type), id: name('get: id', id) });
      return v === null ? undefined : v;
    },
    list: function (type, options) {
      var o = options || {};
      var arg = { type: name('list: type', type) };
      if (o.after !== undefined) arg.after = String(o.after);
      if (o.before !== undefined) arg.before = String(o.before);
      if (o.limit !== undefined) {
        if (!Number.isInteger(o.limit) || o.limit < 0) throw new TypeError('tree.list: limit must be a non-negative integer');
        arg.limit = o.limit;
      }
      if (o.reverse === true) arg.reverse = true;
      return host('list', arg);
    },
    count: function (type) {
      return host('count', { type: name('count: type', type) });
    },
    put: refuse('put'),
    delete: refuse('delete')
  });

  function clip(s) {
    return s.length > MAX_LENGTH ? s.slice(0, MAX_LENGTH) + '…' : s;
  }

  function failuresOf(list) {
    var out = [];
    for (var i = 0; i < list.length && out.length < MAX_FAILURES; i++) {
      var f = list[i];
      out.push(clip(typeof f === 'string' && f !== '' ? f : describe(f)));
    }
    if (list.length > MAX_FAILURES) out.push('… and ' + (list.length - MAX_FAILURES) + ' more failures');
    return out;
  }

  function verdict(result) {
    if (result === undefined || result === true) return [];
    if (result === false) return ['the check returned false'];
    if (typeof result === 'string') return [clip(result === '' ? 'the check failed (empty message)' : result)];
    if (Array.isArray(result)) return failuresOf(result);
    if (result !== null && typeof result === 'object') {
      if (typeof result.then === 'function') return ['run returned a Promise: checks are synchronous'];
      if (Array.isArray(result.failures)) return failuresOf(result.failures);
    }
    return ['run returned ' + (result === null ? 'null' : typeof result) + ': return true or nothing for a pass, a string, an array of strings or { failures } for failures'];
  }

  g.__kit_check_name = function () {
    var p = pick();
    if (p.error) throw new TypeError(p.error);
    return p.check.name;
  };

  g.__kit_check_run = function (inputJson) {
    var failures;
    try {
      var p = pick();
      if (p.error) {
        failures = [p.error];
      } else {
        var input = JSON.parse(inputJson);
        var result = p.check.run(input.entry, tree, { twin: input.twin, world: input.world });
        failures = verdict(result);
      }
    } catch (e) {
      failures = [clip('the check threw: ' + describe(e))];
    }
    return JSON.stringify({ pass: failures.length === 0, failures: failures });
  };
})();
`;
