import type { JsonObject } from './types';
import { qualifiedResource, type ResourceType } from './resources';

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** A failure the handler turns into a `Status` response, shaped as the real API server shapes it. */
export class KubeError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly reason: string = REASONS[code] ?? 'Unknown',
    readonly details?: JsonObject,
  ) {
    super(message);
  }

  toStatus(): JsonObject {
    const status: JsonObject = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

export function statusFor(code: number, message?: string): KubeError {
  return new KubeError(code, message ?? `injected failure (${code})`);
}

function details(type: ResourceType, name: string): JsonObject {
  return { name, group: type.group, kind: type.resource };
}

export function notFound(type: ResourceType, name: string): KubeError {
  return new KubeError(404, `${qualifiedResource(type)} "${name}" not found`, 'NotFound', details(type, name));
}

export function alreadyExists(type: ResourceType, name: string): KubeError {
  return new KubeError(409, `${qualifiedResource(type)} "${name}" already exists`, 'AlreadyExists', details(type, name));
}

export function conflict(type: ResourceType, name: string): KubeError {
  return new KubeError(
    409,
    `Operation cannot be fulfilled on ${qualifiedResource(type)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    'Conflict',
    details(type, name),
  );
}

export function invalid(type: ResourceType, name: string, message: string): KubeError {
  return new KubeError(422, `${type.kind} "${name}" is invalid: ${message}`, 'Invalid', details(type, name));
}

export function expired(message: string): KubeError {
  return new KubeError(410, message, 'Expired');
}
