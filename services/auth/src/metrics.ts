import { cachedReading } from '@quire/metrics';
import { Counter, Gauge, type Registry } from 'prom-client';

/** The auth service's Prometheus metrics: tokens issued by grant, refusals by reason, active grants. */
export class AuthMetrics {
  private readonly issuedTotal: Counter<'grant_type'>;
  private readonly refusedTotal: Counter<'reason'>;

  /** On the process's registry; `activeGrants` is a query, read at most every 15 s whatever the scrapes. */
  constructor(registry: Registry, activeGrants: () => Promise<number>) {
    const registers = [registry];
    const grants = cachedReading(activeGrants);
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
      help: 'Grants not expired, across the tenants this process serves (read at most every 15 s)',
      registers,
      async collect() {
        this.set(await grants());
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
