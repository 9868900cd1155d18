import { parse, serialize } from 'cookie';
import type { Request, Response } from 'express';

/** How a cookie is set: Frappe's defaults are path `/`, SameSite=Lax, not HttpOnly, a session cookie. */
export interface CookieOptions {
  httpOnly?: boolean;
  /** Seconds; also sets Expires. */
  maxAge?: number;
  sameSite?: 'Lax' | 'Strict' | 'None';
  /** Default `/`. */
  path?: string;
}

export function requestCookies(req: Request): Record<string, string | undefined> {
  const header = req.headers.cookie;
  return header ? parse(header) : {};
}

/** Sets a cookie Frappe's way: path `/`, Secure on https, the value URL-quoted. */
export function setCookie(req: Request, res: Response, name: string, value: string, options: CookieOptions = {}): void {
  const cookie = serialize(name, value, {
    path: options.path ?? '/',
    sameSite: (options.sameSite ?? 'Lax').toLowerCase() as 'lax' | 'strict' | 'none',
    httpOnly: options.httpOnly ?? false,
    secure: req.secure,
    ...(options.maxAge !== undefined ? { maxAge: options.maxAge, expires: new Date(Date.now() + options.maxAge * 1000) } : {}),
  });
  res.appendHeader('Set-Cookie', cookie);
}

export function clearCookie(req: Request, res: Response, name: string): void {
  res.appendHeader('Set-Cookie', serialize(name, '', { path: '/', sameSite: 'lax', secure: req.secure, expires: new Date(0) }));
}
