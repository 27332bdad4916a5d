import vm from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { forgetClones, jsonAdopt, jsonClone, jsonCopy } from './json-copy.js';

/** What the text round trip gives, compared as text (key order included) and as a structure. */
function sameAsJson(value: unknown): void {
  const text = JSON.stringify(value);
  const copied = jsonCopy(value);
  expect(JSON.stringify(copied)).toBe(text);
  expect(copied).toStrictEqual(text === undefined ? undefined : JSON.parse(text));
}

describe('jsonCopy', () => {
  it('copies as JSON.parse(JSON.stringify(v)) does, across a V8 context', () => {
    const guest = vm.createContext({});
    const values = vm.runInContext(
      `[
        { id: 'cus_1', n: 0, neg: -0, big: 1e21, small: 5e-324, nan: NaN, inf: -Infinity, t: true, f: false, nil: null, u: undefined, fn() {}, s: Symbol('x'),
          nested: { list: [1, undefined, () => 1, Symbol('y'), null, [], {}], deep: { a: { b: { c: 'd' } } } }, 2: 'two', 1: 'one', 'é😀': '\\ud800 lone' },
        [ , 1, , 3 ],
        new Date(86400000),
        { when: new Date(0), custom: { toJSON(key) { return 'key:' + key; } } },
        { boxed: [new Number(3), new String('s'), new Boolean(false), new Number(NaN)] },
        Object.assign(Object.create({ inherited: 1 }), { own: 2 }),
        new Map([[1, 2]]),
        'text', 42, null, true,
      ]`,
      guest,
    ) as unknown[];
    for (const v of values) sameAsJson(v);
  });

  it('answers undefined where JSON.stringify does, and throws where it throws', () => {
    expect(jsonCopy(undefined)).toBeUndefined();
    expect(jsonCopy(() => 1)).toBeUndefined();
    expect(jsonCopy(Symbol('x'))).toBeUndefined();
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = cyclic;
    expect(() => jsonCopy(cyclic)).toThrow(TypeError);
    expect(() => jsonCopy({ n: 10n })).toThrow(TypeError);
    // A shared (not cyclic) object is copied twice, as the text would hold it twice.
    const shared = { x: 1 };
    const copied = jsonCopy({ a: shared, b: shared }) as { a: object; b: object };
    expect(copied).toEqual({ a: { x: 1 }, b: { x: 1 } });
    expect(copied.a).not.toBe(copied.b);
  });

  it('makes objects of this realm, unlinked from the original', () => {
    const guest = vm.createContext({});
    const original = vm.runInContext('({ list: [{ a: 1 }] })', guest) as { list: { a: number }[] };
    const copied = jsonCopy(original) as { list: { a: number }[] };
    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
    expect(Array.isArray(copied.list) && copied.list instanceof Array).toBe(true);
    original.list[0]!.a = 2;
    expect(copied.list[0]!.a).toBe(1);
  });
});

describe('jsonCopy past its cache of key lists', () => {
  it('still copies exactly once a guest has made up more key lists than it keeps', () => {
    // Each object below has a key list of its own; far more than the copy keeps makers for.
    for (let i = 0; i < 20_000; i++) sameAsJson({ [`k${i}`]: i, shared: true });
    sameAsJson({ a: 1, [`fresh-${Date.now()}`]: { b: [1, { c: 2 }] }, z: 'last' });
    sameAsJson({ id: 'cus_1', object: 'customer', metadata: { order: '7' } });
  });
});

describe('jsonAdopt (a value handed over)', () => {
  afterEach(() => forgetClones());

  it("keeps the call's clones, wherever they sit in the value, and copies the rest", () => {
    const guest = vm.createContext({});
    const made = jsonClone(vm.runInContext('({ id: "cus_1", list: [1, { a: "b" }], none: null })', guest)) as object;
    const wrapper = vm.runInContext('(o) => ({ s: 7, o, data: { object: o } })', guest) as (o: object) => { s: number; o: object; data: { object: object } };
    const record = jsonAdopt(wrapper(made)) as { s: number; o: object; data: { object: object } };
    expect(record.o).toBe(made);
    expect(record.data.object).toBe(made);
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(JSON.stringify(record)).toBe(JSON.stringify(wrapper(made)));
    // Handed over whole, it is answered as it is.
    expect(jsonAdopt(made)).toBe(made);
    // Once the call is over, the clone is copied like anything else.
    forgetClones();
    expect(jsonAdopt(made)).not.toBe(made);
    expect(jsonAdopt(made)).toStrictEqual(made);
  });

  it('copies a copy that is not a clone, and a clone changed since into what JSON would not keep as it is', () => {
    const guest = vm.createContext({});
    const plain = { a: 1 };
    expect((jsonAdopt({ plain }) as { plain: object }).plain).not.toBe(plain);
    const copied = jsonCopy({ a: 1 }) as object;
    expect(jsonAdopt(copied)).not.toBe(copied);
    const changes: ((o: Record<string, unknown>) => void)[] = [
      (o) => (o['gone'] = undefined),
      (o) => (o['n'] = NaN),
      (o) => (o['n'] = -0),
      (o) => (o['n'] = Infinity),
      (o) => (o['when'] = new Date(0)),
      (o) => (o['fn'] = () => 1),
      (o) => (o['custom'] = { toJSON: () => 'custom' }),
      (o) => (o['boxed'] = new String('s')),
      (o) => (o['guest'] = vm.runInContext('({ a: 1 })', guest)),
      (o) => (o['list'] = [1, , 3]),
      (o) => (o['list'] as unknown[]).push(undefined),
      (o) => (o['deep'] = { deeper: { n: 10n } }),
    ];
    for (const change of changes) {
      const made = jsonClone({ id: 'x', list: [1, 2] }) as Record<string, unknown>;
      change(made);
      let adopted: unknown;
      try {
        adopted = jsonAdopt({ made });
      } catch (e) {
        // A BigInt: thrown as jsonCopy throws it.
        expect(() => jsonCopy({ made })).toThrow((e as Error).message);
        continue;
      }
      expect((adopted as { made: object }).made).not.toBe(made);
      expect(adopted).toStrictEqual(JSON.parse(JSON.stringify({ made })));
    }
  });

  it('still finds a cycle made since, as the copy does', () => {
    const made = jsonClone({ a: { b: 1 } }) as { a: Record<string, unknown> };
    made.a['loop'] = made;
    expect(() => jsonAdopt({ made })).toThrow(TypeError);
  });
});
