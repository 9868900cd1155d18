import type http from 'node:http';
import { createAdapter } from '@socket.io/redis-adapter';
import type { DocumentChange, RealtimeMessage } from '@quire/db';
import { getDoc } from '@quire/documents';
import { readScope, type Principal } from '@quire/permissions';
import type { Platform, Tenant } from '@quire/tenancy';
import type { RequestHandler } from 'express';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import { Server, type Namespace, type Socket } from 'socket.io';
import { HandshakeRefused, identify, type SocketIdentity } from './handshake';
import { rooms } from './rooms';
import { Presence } from './presence';
import { databaseTransport, redisTransport, type ControlMessage, type Delivery, type Transport } from './transport';

/**
 * Realtime events as frappe-react-sdk expects them (frappe-clients.md §4.2): Socket.IO v4 at
 * /socket.io on the API's own port, one namespace per tenant (`/<site>`, the SDK's `siteName`),
 * Frappe's six subscribe handlers, rooms and payloads. Events come from committed changes only
 * (ChangeNotifier.documentChanged, after commit) and from apps' publishRealtime; they reach
 * sockets on every API process (transport.ts). A socket joins a DocType's or a document's room
 * only after a read-permission check, so what a room hears its sockets may read.
 */

export interface RealtimeOptions {
  /** With it, Socket.IO's Redis adapter and emitter carry events between processes; without, the database does. */
  redisUrl?: string | undefined;
  /** Keeps deployments that share a Redis apart (the deployment's prefix). */
  prefix: string;
  logger: Logger;
  registry?: Registry | undefined;
}

export interface RealtimeServer {
  close(): Promise<void>;
}

/** What this process keeps of a socket besides what Socket.IO carries between processes (`socket.data`). */
interface SocketData {
  user: string;
}

/** How long close() waits for handlers still talking to Redis. */
const CLOSE_WAIT_MS = 2000;

const NAMESPACE = /^\/[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
/**
 * How long an empty namespace is kept: longer than the adapter's requests to other processes
 * (Redis adapter: 5 s), so the viewers broadcast a last disconnect starts finishes on an open
 * adapter, and a client that reconnects at once finds its namespace still there.
 */
const NAMESPACE_IDLE_MS = 6000;

function acknowledge(ack: unknown, joined: boolean): void {
  if (typeof ack === 'function') (ack as (joined: boolean) => void)(joined);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * Socket.IO's Redis adapter and emitter publish without handling a failed PUBLISH, which would be
 * an unhandled rejection (fatal to Node) whenever Redis is down: each publish gets a handler that
 * logs, and callers that await the promise still see the failure.
 */
function logPublishFailures(client: Redis, logger: Logger): void {
  const publish = (channel: string | Buffer, message: string | Buffer): Promise<number> => Redis.prototype.publish.call(client, channel, message);
  let lastLogged = 0;
  const published = (channel: string | Buffer, message: string | Buffer): Promise<number> => {
    const result = publish(channel, message);
    result.catch((err: unknown) => {
      if (Date.now() - lastLogged < 10_000) return;
      lastLogged = Date.now();
      logger.warn({ err }, 'realtime events not published (Redis unreachable)');
    });
    return result;
  };
  client.publish = published;
}

export async function attachRealtime(httpServer: http.Server, platform: Platform, caller: RequestHandler, options: RealtimeOptions): Promise<RealtimeServer> {
  const { logger } = options;
  const registers = options.registry ? [options.registry] : [];
  // Plain counts, read at scrape time: nothing but an addition per event on the write path.
  const sent = new Map<string, number>();
  new Counter({
    name: 'quire_realtime_events_total',
    help: 'Realtime events this process sent, by event',
    labelNames: ['event'],
    registers,
    collect() {
      this.reset();
      for (const [event, n] of sent) this.inc({ event }, n);
    },
  });
  let connected = 0;
  new Gauge({
    name: 'quire_realtime_sockets',
    help: 'Realtime sockets connected to this process',
    registers,
    collect() {
      this.set(connected);
    },
  });
  new Gauge({
    name: 'quire_realtime_namespaces',
    help: "Tenants' realtime namespaces this process keeps (those with sockets or handshakes, and for a few seconds after)",
    registers,
    collect() {
      this.set(namespaces.size);
    },
  });

  const io = new Server(httpServer, {
    path: '/socket.io',
    serveClient: false,
    // Origins are judged per tenant at the namespace (handshake.ts); polling answers echo them.
    cors: { origin: true, credentials: true, allowedHeaders: ['authorization', 'x-frappe-site-name', 'content-type'] },
  });

  const redis: Redis[] = [];
  const key = `${options.prefix}:socket.io`;
  if (options.redisUrl) {
    // Redis down must not stop the API: a publish fails after one reconnection attempt instead of
    // queueing (start-up, handshakes and writes go on; the events are lost, as Frappe's would be),
    // while the subscriber waits and subscribes again once Redis is back.
    const pub = new Redis(options.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1 });
    const sub = pub.duplicate({ maxRetriesPerRequest: null });
    logPublishFailures(pub, logger);
    for (const client of [pub, sub]) {
      // Once per outage, not once per reconnection attempt.
      let down = false;
      client.on('error', (err) => {
        if (!down) logger.warn({ err }, 'realtime Redis connection failed');
        down = true;
      });
      client.on('ready', () => {
        if (down) logger.info('realtime Redis connection back');
        down = false;
      });
    }
    redis.push(pub, sub);
    io.adapter(createAdapter(pub, sub, { key }));
  }

  /** Principal and tenant of this process's sockets (socket.data holds only what may cross processes). */
  const identities = new WeakMap<Socket, SocketIdentity>();
  /** The tenants' namespaces this process has sockets in (or handshakes under way for), by name. */
  const namespaces = new Map<string, { nsp: Namespace; handshakes: number }>();

  /**
   * A namespace is kept only while it has a socket or a handshake: one left with neither for
   * NAMESPACE_IDLE_MS is dropped (with its adapter's subscriptions), so what a process keeps grows
   * with its connections, not with every name ever asked for.
   */
  const dropIfEmpty = (name: string): void => {
    const entry = namespaces.get(name);
    if (closing || !entry || entry.handshakes > 0 || entry.nsp.sockets.size > 0) return;
    namespaces.delete(name);
    io._nsps.delete(name);
    // The Redis adapter unsubscribes without awaiting: its commands must not meet a closed connection.
    void Promise.resolve(entry.nsp.adapter.close()).catch((err: unknown) => logger.warn({ err }, 'realtime namespace adapter did not close'));
  };
  const dropTimers = new Set<NodeJS.Timeout>();
  let closing = false;
  const dropLaterIfEmpty = (name: string): void => {
    if (closing) return;
    const timer = setTimeout(() => {
      dropTimers.delete(timer);
      dropIfEmpty(name);
    }, NAMESPACE_IDLE_MS).unref();
    dropTimers.add(timer);
  };

  const tenantNamespace = (name: string): Namespace => {
    const existing = namespaces.get(name);
    if (existing) return existing.nsp;
    const nsp = io.of(name);
    const entry = { nsp, handshakes: 0 };
    nsp.use((socket, next) => {
      entry.handshakes++;
      identify(platform, caller, name, socket.request)
        .then(
          async (identity) => {
            identities.set(socket, identity);
            (socket.data as SocketData).user = identity.principal.user;
            // Connected only once every process may know this tenant has a socket (presence.ts).
            await presence.connected(identity.tenant.name);
            next();
          },
          (err: unknown) => next(err instanceof HandshakeRefused ? err : new Error('Not authenticated')),
        )
        .finally(() => {
          entry.handshakes--;
          // A refused handshake leaves no socket: the namespace goes unless someone else is in it.
          dropLaterIfEmpty(name);
        });
    });
    nsp.on('connection', (socket) => {
      socket.on('disconnect', () => dropLaterIfEmpty(name));
      onConnection(nsp, socket);
    });
    namespaces.set(name, entry);
    return nsp;
  };
  // A `/<tenant>` namespace is made when a client asks for one of an existing tenant, with the
  // handshake checks and handlers above; any other name is refused ("Invalid namespace") and kept nowhere.
  io.of((name, _auth, next) => {
    if (!NAMESPACE.test(name) || !platform.tenants.get(name.slice(1))) {
      next(null, false);
      return;
    }
    tenantNamespace(name);
    next(null, true);
  });

  const deliverLocally = ({ tenant, rooms: to, event, payload }: Delivery) => {
    namespaces.get(`/${tenant}`)?.nsp.local.to(to).emit(event, payload);
  };
  // Presence and transport talk both ways: presence announces through the transport, which hands it what it hears.
  const link: { transport?: Transport } = {};
  const presence = new Presence((message) => link.transport?.control(message) ?? Promise.resolve());
  const heard = (message: ControlMessage) => presence.heard(message);
  const [pub, sub] = redis;
  const transport = pub && sub ? await redisTransport(pub, sub, key, heard, logger) : await databaseTransport(platform.db, deliverLocally, heard, logger);
  link.transport = transport;
  await presence.start();
  const send = (delivery: Delivery) => {
    if (!presence.wanted(delivery.tenant)) return;
    sent.set(delivery.event, (sent.get(delivery.event) ?? 0) + 1);
    transport.send(delivery);
  };

  const unsubscribe = platform.changes.onRealtime({
    wanted: (tenant: string) => presence.wanted(tenant),
    documentChanged(tenant: string, change: DocumentChange) {
      send({
        tenant,
        rooms: [rooms.doc(change.doctype, change.name)],
        event: 'doc_update',
        payload: { doctype: change.doctype, name: change.name, modified: change.modified },
      });
      if (change.list) {
        send({
          tenant,
          rooms: [rooms.doctype(change.doctype), ...change.owners.map((owner) => rooms.doctypeOwned(change.doctype, owner))],
          event: 'list_update',
          payload: { doctype: change.doctype, name: change.name, user: change.user },
        });
      }
    },
    message(tenant: string, message: RealtimeMessage) {
      const t = message.target as { user?: string; doctype?: string; docname?: string; room?: string };
      const to = t.room
        ? [t.room]
        : t.user
          ? [rooms.user(t.user)]
          : t.doctype && t.docname
            ? [rooms.doc(t.doctype, t.docname)]
            : t.doctype
              ? [rooms.doctype(t.doctype)]
              : [rooms.all];
      send({ tenant, rooms: to, event: message.event, payload: message.message });
    },
  });

  /**
   * Work a socket's event starts and nobody awaits (joins, viewer broadcasts that ask Redis):
   * failures are logged, and close() lets it finish before the Redis connections go, so no command
   * is cut off mid-flight.
   */
  const pending = new Set<Promise<unknown>>();
  const background = (work: Promise<unknown>): void => {
    const tracked = work.catch((err: unknown) => logger.warn({ err }, 'realtime handler failed')).finally(() => pending.delete(tracked));
    pending.add(tracked);
  };

  /** The users with `doctype/name` open, told to everyone who has it open (skipped when the only viewer is the socket's own user). */
  const broadcastViewers = async (nsp: Namespace, socket: Socket | undefined, doctype: string, docname: string) => {
    const room = rooms.openDoc(doctype, docname);
    const sockets = await nsp.in(room).fetchSockets();
    const users = [...new Set(sockets.map((s) => (s.data as SocketData).user))].sort();
    const own = socket ? (socket.data as SocketData).user : undefined;
    if (users.length === 1 && users[0] === own) return;
    sent.set('doc_viewers', (sent.get('doc_viewers') ?? 0) + 1);
    nsp.to(room).emit('doc_viewers', { doctype, docname, users });
  };

  /** How much of `doctype` (or whether the document `name`) the caller may read; never throws (a failure reads as no). */
  const readable = async (tenant: Tenant, principal: Principal, doctype: string, name?: string): Promise<'all' | 'owner' | false> => {
    try {
      const ctx = await platform.context(tenant, principal);
      const meta = ctx.meta.get(doctype);
      if (!meta || meta.istable) return false;
      const scope = readScope(meta, principal);
      if (scope === false || name === undefined) return scope;
      await getDoc(ctx, doctype, name); // 404 and 403 both mean: not for this socket
      return scope;
    } catch {
      return false;
    }
  };

  function onConnection(nsp: Namespace, socket: Socket): void {
    const identity = identities.get(socket);
    if (!identity) {
      socket.disconnect(true);
      return;
    }
    const { tenant, principal } = identity;
    connected++;
    socket.on('disconnect', () => presence.disconnected(tenant.name));
    void socket.join(rooms.user(principal.user));
    if (principal.roles.has('Desk User') || principal.roles.has('Administrator')) void socket.join(rooms.all);
    const open = new Set<string>(); // `doctype\0name` this socket has open

    /**
     * A joining handler (`<doctype>[, <name>][, ack]`): its arguments checked, then the caller's read
     * permission, then `join` with the scope granted. It also answers an acknowledgement when the
     * client asks for one (whether it joined): the SDK never does, a test or an app can wait for it.
     */
    const onJoin = (event: string, named: boolean, join: (dt: string, dn: string, scope: 'all' | 'owner') => Promise<void>) => {
      socket.on(event, (doctype: unknown, ...rest: unknown[]) => {
        const dt = str(doctype);
        const dn = named ? str(rest[0]) : '';
        const ack = named ? rest[1] : rest[0];
        if (!dt || dn === undefined) {
          acknowledge(ack, false);
          return;
        }
        background(
          readable(tenant, principal, dt, named ? dn : undefined).then(async (scope) => {
            if (scope) await join(dt, dn, scope);
            acknowledge(ack, scope !== false);
          }),
        );
      });
    };
    onJoin('doctype_subscribe', false, async (dt, _dn, scope) => {
      await socket.join(scope === 'all' ? rooms.doctype(dt) : rooms.doctypeOwned(dt, principal.user));
    });
    socket.on('doctype_unsubscribe', (doctype: unknown) => {
      const dt = str(doctype);
      if (!dt) return;
      void socket.leave(rooms.doctype(dt));
      void socket.leave(rooms.doctypeOwned(dt, principal.user));
    });
    onJoin('doc_subscribe', true, async (dt, dn) => {
      await socket.join(rooms.doc(dt, dn));
    });
    socket.on('doc_unsubscribe', (doctype: unknown, name: unknown) => {
      const dt = str(doctype);
      const dn = str(name);
      if (dt && dn) void socket.leave(rooms.doc(dt, dn));
    });
    onJoin('doc_open', true, async (dt, dn) => {
      await socket.join(rooms.openDoc(dt, dn));
      open.add(`${dt}\0${dn}`);
      await broadcastViewers(nsp, socket, dt, dn);
    });
    socket.on('doc_close', (doctype: unknown, name: unknown) => {
      const dt = str(doctype);
      const dn = str(name);
      if (!dt || !dn || !open.delete(`${dt}\0${dn}`)) return;
      background(
        (async () => {
          await socket.leave(rooms.openDoc(dt, dn));
          await broadcastViewers(nsp, undefined, dt, dn);
        })(),
      );
    });
    socket.on('disconnect', () => {
      connected--;
      for (const key of open) {
        const [dt = '', dn = ''] = key.split('\0');
        background(broadcastViewers(nsp, undefined, dt, dn));
      }
    });
  }

  return {
    async close() {
      closing = true;
      for (const timer of dropTimers) clearTimeout(timer);
      dropTimers.clear();
      unsubscribe();
      presence.stop();
      await transport.close();
      // Not io.close(): that would close the HTTP server too, which drains on its own (listen.ts).
      io.local.disconnectSockets(true);
      io.engine.close();
      // The disconnects above tell other processes' viewers who left (through Redis): let that
      // finish (bounded: a request to the others times out on its own) before the connections go.
      await Promise.race([Promise.allSettled([...pending]), new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
      // QUIT waits for replies still owed; a connection that is down has none to wait for.
      await Promise.all(
        redis.map(async (client) => {
          if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
          else client.disconnect();
        }),
      );
    },
  };
}
