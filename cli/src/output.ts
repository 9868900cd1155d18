import type { Command } from 'commander';
import { FrappeError } from '@quire/errors';
import { createRuntime, loadRuntimeConfig, type Runtime } from '@quire/runtime';

/** A command's result: the JSON object `--json` prints, and the text a person reads otherwise. */
export interface CommandResult {
  json: Record<string, unknown>;
  text: string;
}

export class UsageError extends Error {}

/** What an error's `--json` object carries besides the error: its `report` (what the command had done, e.g. TenantMigrationError's). */
function reportOf(e: unknown): object {
  const report: unknown = typeof e === 'object' && e !== null && 'report' in e ? e.report : undefined;
  return typeof report === 'object' && report !== null ? report : {};
}

export function print(result: CommandResult, json: boolean): void {
  process.stdout.write(json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
}

export function printError(e: unknown, json: boolean): number {
  const message = e instanceof Error ? e.message : String(e);
  const excType = e instanceof FrappeError ? e.excType : e instanceof UsageError ? 'UsageError' : 'Error';
  if (json) process.stdout.write(`${JSON.stringify({ ...reportOf(e), error: { exc_type: excType, message } })}\n`);
  else process.stderr.write(`quire: ${message}\n`);
  return e instanceof UsageError ? 2 : 1;
}

/**
 * Runs one command on a runtime of its own (the same composition `quire serve` uses, without
 * services: its writes go through the same hooks, the webhook outbox included) and prints its result.
 */
export async function runCommand(program: Command, fn: (rt: Runtime) => Promise<CommandResult>): Promise<void> {
  const rt = await createRuntime({ config: loadRuntimeConfig(), name: 'quire-cli' });
  try {
    print(await fn(rt), program.opts<{ json?: boolean }>().json ?? false);
  } finally {
    await rt.close();
  }
}
