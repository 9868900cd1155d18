// k6 run -e BASE=https://{tenant}.quire.example.com -e TENANTS_FILE=tenants.jsonl -e PROFILE=ci load-tests/day.ts
// A day of traffic on a daily curve: reads (token and Bearer), writes, methods and token requests (load-tests/README.md).
import type { SummaryData } from './lib/summary.ts';
import { entry } from './lib/entry.ts';
import * as iterations from './lib/iterations.ts';
import type { SetupData } from './lib/setup.ts';

const run = entry('day');

export const options = run.options;

export function setup(): Promise<SetupData> {
  return run.setup();
}

export function reads(data: SetupData): Promise<void> {
  return iterations.reads(data);
}

export function bearerReads(data: SetupData): Promise<void> {
  return iterations.bearerReads(data);
}

export function writes(data: SetupData): Promise<void> {
  return iterations.writes(data);
}

export function methods(data: SetupData): Promise<void> {
  return iterations.methods(data);
}

export function tokens(data: SetupData): Promise<void> {
  return iterations.tokens(data);
}

export function handleSummary(data: SummaryData): Record<string, string> {
  return run.handleSummary(data);
}
