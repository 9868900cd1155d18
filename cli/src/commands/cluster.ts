import { addCluster, listClusters, setClusterState, setClusterWeight, type AddClusterInput, type ClusterSummary } from '@quire/tenancy';
import type { Runtime } from '@quire/runtime';
import type { CommandResult } from '../output';
import { UsageError } from '../output';

/** `quire cluster add|list|drain|undrain|set`: the Postgres clusters tenants' schemas live on. */

function line(c: ClusterSummary): string {
  return `${c.name}\t${c.state}\tweight ${c.weight}\t${c.tenants} tenant(s)\t${c.url}`;
}

export async function clusterAdd(
  rt: Runtime,
  name: string,
  options: { url: string; directUrl?: string | undefined; poolMode?: string | undefined; weight?: string | undefined },
): Promise<CommandResult> {
  const { poolMode } = options;
  if (poolMode !== undefined && poolMode !== 'session' && poolMode !== 'transaction') throw new UsageError('--pool-mode is session or transaction');
  const input: AddClusterInput = {
    name,
    url: options.url,
    directUrl: options.directUrl,
    poolMode,
    weight: options.weight === undefined ? undefined : Number(options.weight),
  };
  const added = await addCluster(rt.platform, input);
  const text = [`Added cluster ${added.name} (weight ${added.weight}) at ${added.url}`];
  if (!added.logical_replication) text.push('Its wal_level is not logical: tenants can be placed there, but not moved to or from it until it is.');
  return { json: { ...added }, text: text.join('\n') };
}

export async function clusterList(rt: Runtime): Promise<CommandResult> {
  const clusters = await listClusters(rt.platform);
  return { json: { clusters }, text: clusters.map(line).join('\n') };
}

export async function clusterDrain(rt: Runtime, name: string, drain: boolean): Promise<CommandResult> {
  await setClusterState(rt.platform, name, drain ? 'draining' : 'active');
  return {
    json: { name, state: drain ? 'draining' : 'active' },
    text: drain ? `Cluster ${name} is draining: no new tenant or move goes there; its tenants stay served` : `Cluster ${name} takes new tenants again`,
  };
}

export async function clusterSet(rt: Runtime, name: string, options: { weight?: string | undefined }): Promise<CommandResult> {
  if (options.weight === undefined) throw new UsageError('Nothing to set: give --weight');
  const weight = Number(options.weight);
  await setClusterWeight(rt.platform, name, weight);
  return { json: { name, weight }, text: `Cluster ${name} has weight ${weight}` };
}
