/**
 * The world file, kit.world.yaml (docs/world-file.md): read whole, and each mistake refused
 * with `invalid_world_file` naming the file, the line and the field.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KitError } from '../../runtime/errors.js';
import { readWorldFile, WORLD_FILE_NAME } from './world-file.js';

let root: string;
let app: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kit-world-file-'));
  app = join(root, 'app');
  mkdirSync(join(app, 'twins', 'acme', 'twin'), { recursive: true });
  writeFileSync(join(app, 'twins', 'acme', 'twin', 'index.ts'), 'export default {};\n');
  mkdirSync(join(app, 'kit', 'checks'), { recursive: true });
  writeFileSync(join(app, 'kit', 'checks', 'no-yearly.js'), 'export const check = {};\n');
  writeFileSync(join(app, 'kit', 'checks', 'other.js'), 'export const check = {};\n');
  mkdirSync(join(root, 'elsewhere'));
  writeFileSync(join(root, 'elsewhere', 'secret.js'), 'export const check = {};\n');
  symlinkSync(join(root, 'elsewhere'), join(app, 'linked'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function read(text: string): ReturnType<typeof readWorldFile> {
  writeFileSync(join(app, WORLD_FILE_NAME), text);
  return readWorldFile(app);
}

/** The KitError a world file is refused with. */
function refusal(text: string): KitError {
  try {
    read(text);
  } catch (e) {
    if (e instanceof KitError) return e;
    throw e;
  }
  throw new Error('the world file was taken');
}

describe('kit.world.yaml', () => {
  it('is absent: no world file', () => {
    rmSync(join(app, WORLD_FILE_NAME), { force: true });
    expect(readWorldFile(app)).toBeNull();
  });

  it('names built-in twins, twins by path, scenario files and checks, each resolved beside the file', () => {
    const file = read(`world: shop
twins:
  stripe:
    scenario: kit/scenarios/stripe.yaml
    checks: [kit/checks/no-yearly.js]
  hello:
  acme:
    path: twins/acme
`)!;
    expect(file.world).toBe('shop');
    expect(file.twins.map((t) => [t.vendor, t.kind, t.line])).toEqual([['stripe', 'builtin', 3], ['hello', 'builtin', 6], ['acme', 'path', 7]]);
    expect(file.twins[0]!.scenario).toEqual({ path: join(app, 'kit', 'scenarios', 'stripe.yaml'), written: 'kit/scenarios/stripe.yaml', line: 4 });
    expect(file.twins[0]!.checks).toEqual([{ name: 'no-yearly', path: join(app, 'kit', 'checks', 'no-yearly.js'), written: 'kit/checks/no-yearly.js', line: 5 }]);
    expect(file.twins[2]!.entry).toMatchObject({ path: join(app, 'twins', 'acme', 'twin', 'index.ts'), folder: join(app, 'twins', 'acme') });
  });

  const refused: [string, string, number, string, RegExp][] = [
    ['an unknown key at the top', 'twins:\n  hello:\nworld: shop\nport: 3\n', 4, 'port', /unknown key/],
    ['an unknown key of a twin', 'twins:\n  hello:\n    scenarios: a.yaml\n', 3, 'twins.hello.scenarios', /unknown key \(a twin has: path, component, scenario, checks\)/],
    ['a path outside the folder', 'twins:\n  acme:\n    path: ../elsewhere\n', 3, 'twins.acme.path', /outside the world file's folder/],
    ['an absolute path', `twins:\n  acme:\n    path: ${'/etc'}\n`, 3, 'twins.acme.path', /is absolute/],
    ['a check reached through a symbolic link', 'twins:\n  hello:\n    checks:\n      - kit/checks/other.js\n      - linked/secret.js\n', 5, 'twins.hello.checks[1]', /through a symbolic link/],
    ['a scenario file through a symbolic link', 'twins:\n  hello:\n    scenario: linked/new/hello.yaml\n', 3, 'twins.hello.scenario', /through a symbolic link/],
    ['a path that does not exist', 'twins:\n  acme:\n    path: twins/nope\n', 3, 'twins.acme.path', /does not exist/],
    ['a folder without a twin', 'twins:\n  acme:\n    path: kit\n', 3, 'twins.acme.path', /holds no twin\/index.ts/],
    ['one vendor twice', 'twins:\n  hello:\n  acme:\n    path: twins/acme\n  hello:\n', 5, 'twins.hello', /a second twin for vendor "hello" \(the first is on line 2\)/],
    ['a key that is no vendor id', 'twins:\n  Hello_World:\n', 2, 'twins.Hello_World', /not a vendor id/],
    ['path and component together', 'twins:\n  acme:\n    path: twins/acme\n    component: twins/acme/twin/index.ts\n', 4, 'twins.acme.component', /not both/],
    ['a scenario in no known format', 'twins:\n  hello:\n    scenario: kit/hello.txt\n', 3, 'twins.hello.scenario', /\.yaml, \.yml or \.json/],
    ['two checks of one name', 'twins:\n  hello:\n    checks: [kit/checks/other.js]\n  acme:\n    path: twins/acme\n    checks: [kit/checks/other.js]\n', 6, 'twins.acme.checks[0]', /already kit\/checks\/other.js/],
    ['a world name that is not one', 'world: My Shop\ntwins:\n  hello:\n', 1, 'world', /lower-case letters/],
    ['no twins', 'world: shop\n', 1, 'twins', /missing/],
    ['text that is not YAML', 'twins:\n  hello: [\n', 3, '', /not YAML/],
  ];
  for (const [what, text, line, field, message] of refused) {
    it(`refuses ${what}, naming the file, line ${line} and ${field || 'the document'}`, () => {
      const e = refusal(text);
      expect(e.code).toBe('invalid_world_file');
      expect(e.details).toMatchObject({ file: join(app, WORLD_FILE_NAME), line, field });
      expect(e.message).toContain(`${join(app, WORLD_FILE_NAME)}:${line}: ${field === '' ? '' : `${field}: `}`);
      expect(e.message).toMatch(message);
    });
  }
});
