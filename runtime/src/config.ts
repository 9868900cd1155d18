import { loadApiConfig, type ApiConfig } from '@quire/api';
import { loadAuthConfig, type AuthConfig } from '@quire/auth-service/config';
import type { PlatformConfig } from '@quire/config';
import { loadOperatorConfig, type OperatorConfig } from '@quire/operator-service/config';
import { loadWebhooksConfig, type WebhooksConfig } from '@quire/webhooks-service/config';
import { loadWorkerConfig, type WorkerConfig } from '@quire/worker-service/config';

/** Every setting of every service, read once from the environment (each service validates its own). */
export interface RuntimeConfig {
  platform: PlatformConfig;
  api: ApiConfig;
  auth: AuthConfig;
  webhooks: WebhooksConfig;
  operator: OperatorConfig;
  worker: WorkerConfig;
}

export function loadRuntimeConfig(env: NodeJS.ProcessEnv = process.env): RuntimeConfig {
  const api = loadApiConfig(env);
  return {
    platform: api.platform,
    api,
    auth: loadAuthConfig(env),
    webhooks: loadWebhooksConfig(env),
    operator: loadOperatorConfig(env),
    worker: loadWorkerConfig(env),
  };
}
