export { webhookCapture, WEBHOOK_EVENTS, MAX_TIMEOUT_SECONDS, type WebhookEvent } from './outbox';
export { attemptDelivery, type Attempted, type DeliveryDeps, type DeliveryObserver, type Outbox, type Outcome } from './delivery';
export { Dispatcher, type DispatcherOptions } from './dispatcher';
export { QueueProducer, QueueWorker, InProcessRunner, QUEUE_NAME, wakeChannel, type QueueLocation, type WorkerOptions } from './runners';
export {
  claimDue,
  deleteEndedEvents,
  dueEvents,
  KEEP_ENDED_EVENTS_MS,
  pendingCount,
  oldestPendingAgeSeconds,
  replayEvent,
  type ClaimedEvent,
  type OutboxEvent,
} from './events';
export { recordBatch, requestLogRow, type TenantBookkeeping } from './request-log';
export { WebhookStates, type WebhookState } from './webhook-state';
export { compileCondition, cachedCondition, ConditionError } from './condition';
export { renderTemplate, checkTemplate, TemplateError } from './template';
export { parseCidrList, isBlockedAddress, type Cidr } from './net-guard';
export { send, type SendRequest, type SendResult } from './http-send';
export { nextAttemptDelay, parseRetryAfter, DEFAULT_RETRY_POLICY, type RetryPolicy } from './backoff';
export { frappeSignature, standardWebhookHeaders, standardWebhookSecret } from './signing';
export { createFairClaimIndexes, createOutboxTable, deleteTenantEvents, dropOutboxTenantReference } from './outbox-table';
