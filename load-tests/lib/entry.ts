// What every entry script shares: its configuration (read once in the init context, where k6
// allows open()), its options from scenarios.js, setup() and handleSummary().
import { buildOptions, type LoadOptions, type ScriptName } from '../scenarios.js';
import { loadConfig, type LoadConfig } from './config.ts';
import { prepare, type SetupData } from './setup.ts';
import { summarize, type SummaryData } from './summary.ts';

export interface Entry {
  config: LoadConfig;
  options: LoadOptions;
  setup(): Promise<SetupData>;
  handleSummary(data: SummaryData): Record<string, string>;
}

export function entry(script: ScriptName): Entry {
  const config = loadConfig(script, __ENV, (path) => open(path));
  return {
    config,
    options: buildOptions(script, __ENV),
    setup: () => prepare(config),
    handleSummary: (data) =>
      summarize(data, config.summaryJson, {
        script,
        profile: config.profile,
        bases: config.bases,
        tenants: config.tenants.length,
        runner: __ENV.QUIRE_LOAD_RUNNER ?? 'k6',
        ...(__ENV.RUN_ABOUT ? { target: __ENV.RUN_ABOUT } : {}),
      }),
  };
}
