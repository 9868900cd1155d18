import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadApps } from '../src/loader';

/**
 * hooks.ts `ownerFields` (by DocType, the Link-to-User fields that make a row its user's for
 * `if_owner` rights) is checked against the apps' DocTypes when they load: a name that is not a
 * Link to User, or a DocType no app defines, stops the load instead of reaching SQL.
 */

const made: string[] = [];
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

const CHORE = JSON.stringify({
  doctype: 'DocType',
  name: 'Chore',
  module: 'Lab',
  fields: [
    { fieldname: 'title', fieldtype: 'Data' },
    { fieldname: 'assignee', fieldtype: 'Link', options: 'User' },
    { fieldname: 'project', fieldtype: 'Link', options: 'Project' },
  ],
});

function labApp(hooks: string): string {
  const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'quire-owner-')), 'lab');
  made.push(path.dirname(root));
  const files = { 'modules.txt': 'Lab\n', 'hooks.js': hooks, 'lab/doctype/chore/chore.json': CHORE };
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

describe('hooks ownerFields', () => {
  it('are loaded by DocType', async () => {
    const loaded = await loadApps([{ name: 'lab', root: labApp('export const ownerFields = { Chore: ["assignee"] };\n') }]);
    expect([...loaded.ownerFields]).toEqual([['Chore', ['assignee']]]);
  });

  it('are none when an app declares none', async () => {
    const loaded = await loadApps([{ name: 'lab', root: labApp('export const docEvents = {};\n') }]);
    expect(loaded.ownerFields.size).toBe(0);
  });

  it.each([
    ['a Data field', '{ Chore: ["title"] }', 'title of Chore must be Link fields to User'],
    ['a Link to another DocType', '{ Chore: ["project"] }', 'project of Chore must be Link fields to User'],
    ['a field the DocType lacks', '{ Chore: ["assignee", "nope"] }', 'nope of Chore must be Link fields to User'],
    ['an unknown DocType', '{ Nope: ["assignee"] }', 'no DocType Nope'],
    ['not a list of names', '{ Chore: "assignee" }', 'ownerFields must map DocType names to lists of fieldnames'],
  ])('refuse %s at load', async (_what, declared, message) => {
    await expect(loadApps([{ name: 'lab', root: labApp(`export const ownerFields = ${declared};\n`) }])).rejects.toThrow(message);
  });
});
