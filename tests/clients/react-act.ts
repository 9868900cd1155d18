import { act } from 'react';

/** Waits until `check` holds, letting React apply what arrived (each wait inside act()); throws after `ms`. */
export async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error('condition not met in time');
    await act(async () => {
      await new Promise((r) => setTimeout(r, 20));
    });
  }
}
