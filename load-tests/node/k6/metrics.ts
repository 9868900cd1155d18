// `k6/metrics` for the Node runner: Counter, Gauge, Rate and Trend, registered when constructed
// (k6 allows that only in the init context) and fed with the iteration's tags plus the call's.
import type { MetricType } from '../../lib/summary';
import { current } from '../engine/context';
import { registry, type Tags } from '../engine/metrics';

class Metric {
  readonly name: string;

  protected constructor(name: string, type: MetricType, isTime: boolean) {
    this.name = name;
    registry.declare(name, type, isTime ? 'time' : 'default');
  }

  add(value: number | boolean, tags?: Tags): void {
    const ctx = current();
    if (ctx?.interrupted) return;
    registry.add(this.name, typeof value === 'boolean' ? Number(value) : value, { ...(ctx?.tags ?? {}), ...(tags ?? {}) });
  }
}

export class Counter extends Metric {
  constructor(name: string, isTime = false) {
    super(name, 'counter', isTime);
  }
}

export class Gauge extends Metric {
  constructor(name: string, isTime = false) {
    super(name, 'gauge', isTime);
  }
}

export class Rate extends Metric {
  constructor(name: string, isTime = false) {
    super(name, 'rate', isTime);
  }
}

export class Trend extends Metric {
  constructor(name: string, isTime = false) {
    super(name, 'trend', isTime);
  }
}

export default { Counter, Gauge, Rate, Trend };
