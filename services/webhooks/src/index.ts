export { loadWebhooksConfig, type WebhooksConfig } from './config';
export { startWebhooksService, type WebhooksService } from './service';
export { WebhookMetrics } from './metrics';
export { platformOutboxes, type PlatformOutboxes } from './outboxes';
