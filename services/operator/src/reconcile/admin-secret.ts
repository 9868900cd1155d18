import type { V1OwnerReference, V1Secret } from '@kubernetes/client-node';
import { generateApiKey, generateApiSecret } from '@quire/auth';
import type { ApiCredentials } from '@quire/documents';
import { MANAGED_BY, TENANT_LABEL } from '../tenant-resource';

/** `<tenant>-admin-credentials`: the Administrator's API key pair, written once. */
export function adminSecretNameOf(tenant: string): string {
  return `${tenant}-admin-credentials`;
}

/** Whether the operator made this Secret (a Secret of that name made by someone else is never touched). */
export function isOperatorSecret(secret: V1Secret | undefined): secret is V1Secret {
  return secret?.metadata?.labels?.['app.kubernetes.io/managed-by'] === MANAGED_BY['app.kubernetes.io/managed-by'];
}

/** A fresh key pair in a Secret, made before the tenant so the plain secret is never only in memory. */
export function newAdminSecret(tenant: string, owner: V1OwnerReference): { secret: V1Secret; credentials: ApiCredentials } {
  const credentials = { api_key: generateApiKey(), api_secret: generateApiSecret() };
  const secret: V1Secret = {
    metadata: { name: adminSecretNameOf(tenant), labels: { ...MANAGED_BY, [TENANT_LABEL]: tenant }, ownerReferences: [owner] },
    type: 'Opaque',
    data: {
      api_key: Buffer.from(credentials.api_key).toString('base64'),
      api_secret: Buffer.from(credentials.api_secret).toString('base64'),
    },
  };
  return { secret, credentials };
}

export function credentialsIn(secret: V1Secret): ApiCredentials | undefined {
  const read = (key: string) => {
    const value = secret.data?.[key];
    return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
  };
  const api_key = read('api_key');
  const api_secret = read('api_secret');
  return api_key && api_secret ? { api_key, api_secret } : undefined;
}
