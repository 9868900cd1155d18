import { startApiServer } from '@quire/api';
import { createRuntime, loadRuntimeConfig } from '@quire/runtime';

/**
 * The API for `npm run bench -- metrics`, both sides started the same way: `on` is `quire serve api`'s
 * composition (operations port, health, request metrics); `off` is the same API without the
 * operations middleware and registry.
 */
const metrics = process.argv[2] === 'on';
const config = loadRuntimeConfig();
const rt = await createRuntime({ config, migrate: 'none', name: 'quire-bench-api', ...(metrics ? { serve: ['api'] as const } : {}) });
const api = rt.api ?? (await startApiServer(rt.platform, config.api, rt.logger));
process.stdout.write(`Quire API (metrics ${metrics ? 'on' : 'off'}) listening on port ${api.port}\n`);
process.once('SIGTERM', () => {
  void api.close(0).then(() => rt.close());
});
