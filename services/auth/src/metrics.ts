import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/** The auth service's Prometheus metrics: tokens issued by grant, refusals by reason, active grants. */
export class AuthMetrics {
  readonly registry = new Registry();
  private readonly issuedTotal: Counter<'grant_type'>;
  private readonly refusedTotal: Counter<'reason'>;

  constructor(activeGrants: () => Promise<number>) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'quire_auth_' });
    this.issuedTotal = new Counter({
      name: 'quire_oauth_tokens_issued_total',
      help: 'Token endpoint successes by grant type',
      labelNames: ['grant_type'],
      registers,
    });
    this.refusedTotal = new Counter({
      name: 'quire_oauth_refusals_total',
      help: 'Refused OAuth requests by reason (OAuth error code)',
      labelNames: ['reason'],
      registers,
    });
    new Gauge({
      name: 'quire_oauth_active_grants',
      help: 'Grants not expired, across the tenants this process serves',
      registers,
      async collect() {
        this.set(await activeGrants());
      },
    });
  }

  issued(grantType: string): void {
    this.issuedTotal.inc({ grant_type: grantType });
  }

  refused(reason: string): void {
    this.refusedTotal.inc({ reason });
  }
}
