import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadApps } from '../src/loader';

/**
 * An app folder holds TypeScript sources (a checkout) or the JavaScript compiled from them (the
 * image, `npm run build`): its modules are its `.ts` files when it has any, else its `.js` files,
 * and a `dist/` folder inside a source app is build output, never loaded a second time.
 */

const made: string[] = [];
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

const NOTE = JSON.stringify({ doctype: 'DocType', name: 'Lab Note', module: 'Lab', fields: [{ fieldname: 'body', label: 'Body', fieldtype: 'Text' }] });

function app(files: Record<string, string>): string {
  const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'quire-app-')), 'lab');
  made.push(path.dirname(root));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

/** The files of a compiled app under `prefix`: JavaScript modules beside the DocType JSON. */
function compiled(prefix: string): Record<string, string> {
  return {
    [`${prefix}modules.txt`]: 'Lab\n',
    [`${prefix}api.js`]: 'export function compiledHello() { return "hello"; }\n',
    [`${prefix}api.test.js`]: 'throw new Error("tests are not loaded");\n',
    [`${prefix}hooks.js`]: 'export const docEvents = { "Lab Note": { validate() {} } };\n',
    [`${prefix}lab/doctype/lab_note/lab_note.json`]: NOTE,
    [`${prefix}lab/doctype/lab_note/lab_note.js`]: 'export const controller = { validate() {} };\n',
  };
}

describe('loadApps', () => {
  it('loads a compiled app from its .js modules and DocType JSON', async () => {
    const root = app(compiled(''));
    const loaded = await loadApps([{ name: 'lab', root }]);
    expect(loaded.doctypes.map((d) => d.name)).toEqual(['Lab Note']);
    expect(loaded.modules).toEqual([{ app: 'lab', module: 'Lab' }]);
    expect([...loaded.functions.keys()].sort()).toEqual(['lab.api.compiledHello']);
    // The DocType's controller and the hooks' doc_events.
    expect(loaded.controllers.hooks('Lab Note', 'validate')).toHaveLength(2);
  });

  it('loads a source app from its .ts modules, never from its dist/ folder', async () => {
    const root = app({
      ...compiled('dist/'),
      'modules.txt': 'Lab\n',
      'api.ts': 'export function sourceHello(): string { return "hello"; }\n',
      'lab/doctype/lab_note/lab_note.json': NOTE,
    });
    const loaded = await loadApps([{ name: 'lab', root }]);
    expect(loaded.doctypes.map((d) => d.name)).toEqual(['Lab Note']);
    expect([...loaded.functions.keys()].sort()).toEqual(['lab.api.sourceHello']);
    expect(loaded.controllers.hooks('Lab Note', 'validate')).toHaveLength(0);
  });
});
