import { backupTenant, formatBytes, restoreTenant, type BackupProgress, type RestoreProgress } from '@quire/tenancy';
import type { Runtime } from '@quire/runtime';
import type { CommandResult } from '../output';

/** Says a progress line once (a count that has not moved is not repeated), in text mode only. */
function progressPrinter(json: boolean): (line: string | undefined) => void {
  let last = '';
  return (line) => {
    if (json || line === undefined || line === last) return;
    last = line;
    process.stdout.write(`${line}\n`);
  };
}

function backupLine(p: BackupProgress): string | undefined {
  // Per table would be a line per DocType: every tenth, and the last.
  if (p.done !== p.total && p.done % 10 !== 0) return undefined;
  return `${p.step === 'tables' ? 'tables' : 'files'}: ${p.done} of ${p.total}`;
}

function restoreLine(p: RestoreProgress): string | undefined {
  switch (p.step) {
    case 'checking':
      return 'checking the backup (signature, completeness)';
    case 'tables':
      return p.done !== undefined && p.total !== undefined && (p.done === p.total || p.done % 10 === 0) ? `tables: ${p.done} of ${p.total}` : undefined;
    case 'files':
      return p.done !== undefined && p.done % 10 === 0 ? `files: ${p.done}` : undefined;
    case 'switching':
      return 'switching to the restored data';
    case 'done':
      return undefined;
  }
}

/** `quire tenant backup <name> --out <file>`: one tenant's schema, platform record and files, in one consistent file. */
export async function tenantBackup(rt: Runtime, name: string, options: { out: string; json: boolean }): Promise<CommandResult> {
  const say = progressPrinter(options.json);
  const report = await backupTenant(rt.platform, { tenant: name, out: options.out, onProgress: (p) => say(backupLine(p)) });
  const missing = report.missingFiles.length ? `\nMissing from the file store (deleted while the backup ran?): ${report.missingFiles.join(', ')}` : '';
  return {
    json: { ...report },
    text:
      `Backed up ${report.tenant} (cluster ${report.cluster}) to ${report.file}: ${report.tables} tables, ${report.rows} rows, ` +
      `${report.files} files (${formatBytes(report.fileBytes)}); ${formatBytes(report.bytes)} in ${report.ms} ms${missing}`,
  };
}

/** `quire tenant restore <file> --as <name> [--cluster <c>] [--replace]`. */
export async function tenantRestore(
  rt: Runtime,
  file: string,
  options: { as?: string | undefined; cluster?: string | undefined; replace: boolean; json: boolean },
): Promise<CommandResult> {
  const say = progressPrinter(options.json);
  const report = await restoreTenant(rt.platform, {
    file,
    ...(options.as !== undefined && { as: options.as }),
    ...(options.cluster !== undefined && { cluster: options.cluster }),
    replace: options.replace,
    onProgress: (p) => say(restoreLine(p)),
  });
  const what = report.replaced ? `Replaced the data of ${report.tenant}` : `Restored ${report.tenant}`;
  const migrated = report.migrated.length ? `; migrated to this release (${report.migrated.length} changes)` : '';
  return {
    json: { ...report },
    text:
      `${what} from the backup of ${report.from} taken ${report.takenAt}, on cluster ${report.cluster}: ${report.tables} tables, ` +
      `${report.rows} rows, ${report.files} files in ${report.ms} ms${migrated}\nHosts: ${report.hosts.join(', ')}\n` +
      'Sessions are not restored: its users sign in again.',
  };
}
