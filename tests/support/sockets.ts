import { io, type Socket } from 'socket.io-client';

/**
 * A connected socket.io client on a tenant's realtime namespace (`/<tenant>`, as Frappe's desk
 * opens it), authenticated by `auth`; rejects when the server refuses the connection.
 */
export async function connectTenantSocket(baseUrl: string, site: string, auth: string, extraHeaders: Record<string, string> = {}): Promise<Socket> {
  const socket = io(`${baseUrl}/${site}`, {
    extraHeaders: { Authorization: auth, 'X-Frappe-Site-Name': site, ...extraHeaders },
    reconnection: false,
    forceNew: true,
  });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', reject);
    });
  } catch (err) {
    socket.disconnect();
    throw err;
  }
  return socket;
}
