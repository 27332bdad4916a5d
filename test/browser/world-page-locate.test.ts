/**
 * The world page marks the line of a scenario the world refused (pages/world/locate.ts). The
 * refusals here are the world's own: each broken document goes through runtime/scenario's
 * parser, and the line the page would mark must be the line marked `# here` (YAML) or the
 * line holding `HERE` (JSON) in the document.
 */
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../runtime/scenario/index.js';
import { CodedError } from '../../runtime/errors.js';
import { fieldPath, locateProblem } from '../../pages/world/locate.js';

/** The world's refusal of `text` as the page receives it: the message and the body's other fields. */
function refusal(text: string, format: 'json' | 'yaml'): { message: string } & Record<string, unknown> {
  try {
    parseScenario(text, format === 'json' ? 'application/json' : 'application/yaml');
  } catch (e) {
    if (!(e instanceof CodedError)) throw e;
    const { code, message, ...details } = e.toBody().error;
    expect(code).toBe('invalid_scenario');
    return { message, ...details };
  }
  throw new Error(`the world took this document:\n${text}`);
}

function markedLine(text: string, mark: string): number {
  const index = text.split('\n').findIndex((l) => l.includes(mark));
  if (index === -1) throw new Error(`no ${mark} in the document`);
  return index + 1;
}

const yamlCases: Record<string, string> = {
  'a status out of range in the second handler': `
state: started
handlers:
  - name: first
    match: GET /v1/customers
    respond:
      status: 200
  - name: second
    match: POST /v1/charges
    respond:
      status: 99 # here
      body: { error: nope }
`,
  'an unknown field of a handler': `
handlers:
  - match: GET /a
    respond: { status: 200 }
  - match: GET /b
    respnd: { status: 200 } # here
`,
  'a state no handler moves to': `
handlers:
  - name: only
    match: GET /a
    when:
      state: never-reached # here
    respond: { status: 200 }
`,
  'a name used twice': `
handlers:
- name: same
  match: GET /a
  respond: { status: 200 }
- name: same # here
  match: GET /b
  respond: { status: 200 }
`,
  'a key given twice (not YAML)': `
handlers:
  - match: GET /a
    match: GET /b # here
    respond: { status: 200 }
`,
  'a broken line (not YAML)': `
handlers:
  - match: GET /a
    respond: { status: 200
  - bad: [ # here
`,
};

describe('locating the world refusal of a scenario', () => {
  for (const [what, text] of Object.entries(yamlCases)) {
    it(`YAML: ${what}`, () => {
      const problem = refusal(text, 'yaml');
      const found = locateProblem(text, 'yaml', problem);
      if (what === 'a broken line (not YAML)') {
        // yaml names the line where it gave up: after the marked line, never before it.
        expect(found?.line).toBeGreaterThanOrEqual(markedLine(text, '# here') - 1);
        return;
      }
      expect(found).toEqual({ line: markedLine(text, '# here') });
    });
  }

  it('JSON: a field deep in the third handler', () => {
    const text = JSON.stringify(
      {
        handlers: [
          { name: 'a', match: 'GET /a', respond: { status: 200 } },
          { name: 'b', match: 'GET /b', respond: { status: 201, body: { note: 'a "quoted" } brace' } } },
          { name: 'c', match: 'GET /c', respond: { status: 'HERE' } },
        ],
      },
      null,
      2,
    );
    const problem = refusal(text, 'json');
    expect(problem.field).toBe('handlers[2].respond.status');
    expect(locateProblem(text, 'json', problem)).toEqual({ line: markedLine(text, 'HERE') });
  });

  it('JSON: a document that does not parse, at the line the parser names', () => {
    const text = '{\n  "handlers": [\n    { "match": "GET /a", }\n  ]\n}\n';
    const problem = refusal(text, 'json');
    expect(problem.problem).toBe('not JSON');
    expect(locateProblem(text, 'json', problem)).toEqual({ line: 3 });
  });

  it('reads a field path with indexes', () => {
    expect(fieldPath('handlers[12].match.headers.x-id')).toEqual(['handlers', 12, 'match', 'headers', 'x-id']);
    expect(fieldPath('state')).toEqual(['state']);
  });
});
