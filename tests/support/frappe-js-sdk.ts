import { FrappeApp } from 'frappe-js-sdk';
import type { TestServer, TestTenant } from './server';

/**
 * The real npm frappe-js-sdk, pointed at one tenant (`X-Frappe-Site-Name: <site>`) of a server and
 * sending `Authorization: <type> <token>` on every request.
 */
export function sdkFor(url: string, site: string, token: string, type: 'token' | 'Bearer' = 'token'): FrappeApp {
  return new FrappeApp(url, { useToken: true, type, token: () => token }, undefined, { 'X-Frappe-Site-Name': site });
}

/** frappe-js-sdk as the tenant's Administrator (token auth with its `api_key:api_secret`). */
export function adminSdk(server: TestServer, t: TestTenant): FrappeApp {
  return sdkFor(server.url, t.name, `${t.api_key}:${t.api_secret}`);
}
