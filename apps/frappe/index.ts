import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AppSource } from '@quire/apps';

/** The `frappe` app: this folder, laid out as Frappe lays out its own. */
export const frappeApp: AppSource = { name: 'frappe', root: path.dirname(fileURLToPath(import.meta.url)) };
