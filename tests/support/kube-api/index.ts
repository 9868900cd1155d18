export { startFakeKubeApi, type FakeKubeApiServer, type RequestLogEntry } from './server';
export { kubeconfigFor, kubeconfigText, writeKubeconfig } from './kubeconfig';
export { ObjectStore } from './store';
export { RESOURCE_TYPES, findResourceType, type ResourceType } from './resources';
