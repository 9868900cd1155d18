// k6 run -e BASE=https://{tenant}.quire.example.com -e TENANTS_FILE=tenants.jsonl load-tests/read-mix.ts
// GET one ToDo and a list of 20, round-robin over every tenant (load-tests/README.md).
import type { SummaryData } from './lib/summary.ts';
import { entry } from './lib/entry.ts';
import * as iterations from './lib/iterations.ts';
import type { SetupData } from './lib/setup.ts';

const run = entry('read-mix');

export const options = run.options;

export function setup(): Promise<SetupData> {
  return run.setup();
}

export function reads(data: SetupData): Promise<void> {
  return iterations.reads(data);
}

export function handleSummary(data: SummaryData): Record<string, string> {
  return run.handleSummary(data);
}
