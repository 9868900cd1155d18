import type { Executor } from '@quire/db';

/** One cluster's jobs table, as the runners see it. */
export interface JobLane {
  cluster: string;
  db: Executor;
}

/** Where jobs are: every cluster's table (re-read now and then), and one cluster's by name. */
export interface JobLanes {
  lanes(): Promise<readonly JobLane[]>;
  laneOf(cluster: string): JobLane;
}

/** The lanes in turn from `start`: no cluster is always looked at first. */
export function rotated<T>(items: readonly T[], start: number): T[] {
  if (items.length === 0) return [];
  const k = start % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}
