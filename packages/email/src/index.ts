export { flushEmailQueue, sendQueuedEmail, type EmailFlushOptions, type EmailFlushSummary, type EmailSendOutcome } from './flush';
export { smtpOptionsOf, readEmailAccount, defaultOutgoingAccount, type EmailAccount } from './email-account';
export { smtpOptionsFromUrl } from './smtp-url';
export { SMTP_TIMEOUTS, type SmtpOptions, type SmtpTlsTrust } from './smtp-options';
export { MAX_ATTEMPTS, SENDING_LEASE_MS, retryDelayMs } from './retry-policy';
export { recipientsOf } from './message';
