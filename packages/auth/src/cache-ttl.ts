/**
 * A cache entry's lifetime: `ms` less up to a fifth, at random. Entries filled together (a process
 * warming up after a deploy) then expire over a spread instead of in one burst of reloads; none is
 * trusted longer than `ms`.
 */
export function spreadTtl(ms: number): number {
  return Math.max(1, Math.round(ms * (1 - Math.random() * 0.2)));
}
