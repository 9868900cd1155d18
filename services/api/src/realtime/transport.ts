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
 */

export interface Delivery {
  tenant: string;
  rooms: string[];
  event: string;
  payload: unknown;
}

export interface Transport {
  send(delivery: Delivery): void;
  close(): Promise<void>;
}

/** Hands a delivery to this process's sockets (the namespace's local ones). */
export type LocalDelivery = (delivery: Delivery) => void;

export function redisTransport(pub: Redis, key: string): Transport {
  const emitter = new Emitter(pub, { key });
  return {
    send({ tenant, rooms, event, payload }) {
      emitter.of(`/${tenant}`).to(rooms).emit(event, payload);
    },
    close: () => Promise.resolve(),
  };
}

const CHANNEL = 'quire_realtime';
/** NOTIFY payloads are limited to 8000 bytes: batches stay under this. */
const MAX_PAYLOAD = 7000;
const BATCH_MS = 5;

export async function databaseTransport(db: Database, deliver: LocalDelivery, logger: Logger): Promise<Transport> {
  const unlisten = await db.listen(CHANNEL, {
    onMessage(payload) {
      let batch: Delivery[];
      try {
        batch = JSON.parse(payload) as Delivery[];
      } catch {
        return;
      }
      for (const d of batch) deliver(d);
    },
  });
  let pending: string[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    const batch = pending;
    pending = [];
    size = 0;
    if (batch.length === 0) return;
    db.query('SELECT pg_notify($1, $2)', [CHANNEL, `[${batch.join(',')}]`]).catch((err: unknown) => logger.warn({ err }, 'realtime events not sent'));
  };
  return {
    send(delivery) {
      const text = JSON.stringify(delivery);
      if (text.length > MAX_PAYLOAD) {
        logger.warn({ event: delivery.event, bytes: text.length }, 'realtime event too large for the database transport: not sent');
        return;
      }
      if (size + text.length > MAX_PAYLOAD) flush();
      pending.push(text);
      size += text.length + 1;
      timer ??= setTimeout(flush, BATCH_MS);
    },
    async close() {
      if (timer) clearTimeout(timer);
      flush();
      await unlisten();
    },
  };
}
