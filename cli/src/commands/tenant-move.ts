import { moveTenant, type MoveProgress } from '@quire/tenancy';
import type { Runtime } from '@quire/runtime';
import type { CommandResult } from '../output';

/** One line of progress, said as it happens (text mode only; `--json` prints the report at the end). */
function progressLine(p: MoveProgress): string | undefined {
  switch (p.step) {
    case 'copying':
      return p.tables ? `copying: ${p.tables.ready} of ${p.tables.total} tables copied` : 'copying the schema';
    case 'catching_up':
      return `catching up: ${p.lagBytes ?? '?'} bytes behind`;
    case 'switching':
      return 'switching: writes held, reads served';
    case 'cleaning_up':
      return 'cleaning up';
    case 'done':
      return undefined;
  }
}

/** `quire tenant move <name> --to <cluster> [--keep-source]`: online, resumable (run it again after a stop). */
export async function tenantMove(rt: Runtime, name: string, options: { to: string; keepSource: boolean; json: boolean }): Promise<CommandResult> {
  let last = '';
  const report = await moveTenant(rt.platform, {
    tenant: name,
    to: options.to,
    keepSource: options.keepSource,
    onProgress: (p) => {
      const line = progressLine(p);
      // Repeated lines (a table count that has not moved) are said once.
      if (!options.json && line !== undefined && line !== last) process.stdout.write(`${line}\n`);
      if (line !== undefined) last = line;
    },
  });
  const { ms } = report;
  return {
    json: { ...report },
    text:
      `Moved ${report.tenant} from ${report.from} to ${report.to} in ${ms.total} ms (copy ${ms.copy} ms, catch-up ${ms.catchUp} ms, ` +
      `writes held ${ms.writesHeld} ms, clean-up ${ms.cleanUp} ms)${report.keptSource ? `; its old copy is kept on ${report.from}, sealed against writes` : ''}`,
  };
}
