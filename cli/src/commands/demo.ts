import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Runtime } from '@quire/runtime';
import { createTenant } from '@quire/tenancy';

/**
 * The `demo` tenant of a first start on the embedded database, and its Administrator's credentials,
 * kept in a git-ignored file next to the data so the printed curl line keeps working on later
 * starts (and `quire keys generate` for its Administrator keeps the file in step).
 */
export const DEMO_TENANT = 'demo';

export interface DemoCredentials {
  tenant: string;
  api_key: string;
  api_secret: string;
  /** The Administrator's login password (local demo only). */
  admin_password: string;
}

export function demoCredentialsFile(rt: Runtime): string {
  return path.join(path.dirname(rt.config.platform.dataDir), 'demo-credentials.json');
}

export function readDemoCredentials(rt: Runtime): DemoCredentials | undefined {
  try {
    return JSON.parse(fs.readFileSync(demoCredentialsFile(rt), 'utf8')) as DemoCredentials;
  } catch {
    return undefined;
  }
}

export function writeDemoCredentials(rt: Runtime, creds: DemoCredentials): void {
  fs.writeFileSync(demoCredentialsFile(rt), `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
}

/** Whether `keys` are the demo Administrator's of this (embedded) deployment's credentials file. */
export function isDemoAdministrator(rt: Runtime, tenant: string, user: string): boolean {
  return !rt.config.platform.databaseUrl && tenant === DEMO_TENANT && user === 'Administrator' && readDemoCredentials(rt) !== undefined;
}

export interface DemoState {
  creds: DemoCredentials;
  /** The key in the file no longer authenticates (new keys were generated in the desk). */
  stale: boolean;
}

/** Makes the demo tenant on the first start; on later starts reads its credentials and checks the key still works. */
export async function ensureDemoTenant(rt: Runtime): Promise<DemoState | undefined> {
  const existing = rt.platform.tenants.get(DEMO_TENANT);
  if (existing) {
    const creds = readDemoCredentials(rt);
    if (!creds) return undefined;
    const principal = await rt.platform.apiKeys.authenticate(existing, creds.api_key, creds.api_secret);
    return { creds, stale: principal === undefined };
  }
  const adminPassword = randomBytes(9).toString('base64url');
  const created = await createTenant(rt.platform, { name: DEMO_TENANT, adminPassword });
  const creds: DemoCredentials = { tenant: created.name, api_key: created.api_key, api_secret: created.api_secret, admin_password: adminPassword };
  writeDemoCredentials(rt, creds);
  return { creds, stale: false };
}
