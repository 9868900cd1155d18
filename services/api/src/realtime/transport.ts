import { Emitter } from '@socket.io/redis-emitter';
import type { Database } from '@quire/db';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * How an event reaches sockets on every API process. With Redis, through Socket.IO's Redis
 * adapter (each process's namespaces subscribe) and its emitter (any process publishes, whether or
 * not a socket of that tenant is connected to it). Without Redis, through the database: events are
 * gathered for a few milliseconds and sent as one NOTIFY, and every process (this one included)
 * hands what it hears to its own sockets. The embedded database has one process: the same path.
 * Beside events, processes tell each other which tenants have sockets (presence.ts).
 */

export interface Delivery {
  tenant: string;
  rooms: string[];
  event: string;
  payload: unknown;
}

/** Between processes: "these tenants have sockets here", or "who has sockets?" (a process starting). */
export type ControlMessage = { kind: 'interest'; tenants: string[] } | { kind: 'query' };

export interface Transport {
  send(delivery: Delivery): void;
  /** Resolves once the message left this process (the database or Redis has it). */
  control(message: ControlMessage): Promise<void>;
  close(): Promise<void>;
}

export type ControlHandler = (message: ControlMessage) => void;

function parseControl(text: string): ControlMessage | undefined {
  try {
    const m = JSON.parse(text) as { kind?: unknown; tenants?: unknown };
    if (m.kind === 'query') return { kind: 'query' };
    if (m.kind === 'interest' && Array.isArray(m.tenants)) return { kind: 'interest', tenants: m.tenants.filter((t): t is string => typeof t === 'string') };
    return undefined;
  } catch {
    return undefined;
  }
}

/** How long start-up waits for the presence channel's subscription (Redis may be down: the API serves on). */
const SUBSCRIBE_WAIT_MS = 2000;

/**
 * Resolves once the presence channel is subscribed (or after SUBSCRIBE_WAIT_MS): a process asking
 * who has sockets must be listening before the others answer, or it misses the answers.
 */
export async function redisTransport(pub: Redis, sub: Redis, key: string, onControl: ControlHandler, logger: Logger): Promise<Transport> {
  const emitter = new Emitter(pub, { key });
  const channel = `${key}#quire-presence`;
  const onMessage = (from: string, text: string) => {
    if (from !== channel) return;
    const m = parseControl(text);
    if (m) onControl(m);
  };
  sub.on('message', onMessage);
  const subscribed = sub.subscribe(channel).catch((err: unknown) => logger.warn({ err }, 'realtime presence channel not subscribed'));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([subscribed, new Promise<void>((resolve) => (timer = setTimeout(resolve, SUBSCRIBE_WAIT_MS)))]);
  clearTimeout(timer);
  return {
    send({ tenant, rooms, event, payload }) {
      emitter.of(`/${tenant}`).to(rooms).emit(event, payload);
    },
    async control(message) {
      await pub.publish(channel, JSON.stringify(message));
    },
    async close() {
      sub.off('message', onMessage);
      // A subscriber that is down would hold UNSUBSCRIBE until Redis is back; it has nothing to leave.
      if (sub.status === 'ready') await sub.unsubscribe(channel).catch(() => undefined);
    },
  };
}

const CHANNEL = 'quire_realtime';
/** NOTIFY payloads are limited to 8000 bytes: batches stay under this. */
const MAX_PAYLOAD = 7000;
const BATCH_MS = 5;

interface Batch {
  d?: Delivery[];
  c?: ControlMessage[];
}

/** Hands a delivery to this process's sockets (the namespace's local ones). */
export type LocalDelivery = (delivery: Delivery) => void;

export async function databaseTransport(db: Database, deliver: LocalDelivery, onControl: ControlHandler, logger: Logger): Promise<Transport> {
  const unlisten = await db.listen(CHANNEL, {
    onMessage(payload) {
      let batch: Batch;
      try {
        batch = JSON.parse(payload) as Batch;
      } catch {
        return;
      }
      for (const c of batch.c ?? []) onControl(c);
      for (const d of batch.d ?? []) deliver(d);
    },
  });
  const notify = (text: string) => db.query('SELECT pg_notify($1, $2)', [CHANNEL, text]);
  let pending: Delivery[] = [];
  let timer: NodeJS.Timeout | undefined;
  // Serialised once per batch, split when a batch would not fit in one NOTIFY.
  const flush = () => {
    timer = undefined;
    const batch = pending;
    pending = [];
    let part: string[] = [];
    let size = 0;
    const sendPart = () => {
      if (part.length === 0) return;
      const text = `{"d":[${part.join(',')}]}`;
      part = [];
      size = 0;
      notify(text).catch((err: unknown) => logger.warn({ err }, 'realtime events not sent'));
    };
    for (const d of batch) {
      const text = JSON.stringify(d);
      if (text.length > MAX_PAYLOAD) {
        logger.warn({ event: d.event, bytes: text.length }, 'realtime event too large for the database transport: not sent');
        continue;
      }
      if (size + text.length > MAX_PAYLOAD) sendPart();
      part.push(text);
      size += text.length + 1;
    }
    sendPart();
  };
  return {
    send(delivery) {
      pending.push(delivery);
      timer ??= setTimeout(flush, BATCH_MS);
    },
    async control(message) {
      const batch: Batch = { c: [message] };
      await notify(JSON.stringify(batch));
    },
    async close() {
      if (timer) clearTimeout(timer);
      flush();
      await unlisten();
    },
  };
}
