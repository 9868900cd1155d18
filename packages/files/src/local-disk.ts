import fs from 'node:fs/promises';
import path from 'node:path';
import type { FileStore } from '@quire/apps';

/**
 * The default FileStore: files on local disk under one root. Keys are relative paths made of
 * safe segments; anything that could climb out of the root is refused.
 */
export class LocalDiskStore implements FileStore {
  constructor(private readonly root: string) {}

  private pathOf(key: string): string {
    const segments = key.split('/');
    if (segments.some((s) => s === '' || s === '.' || s === '..' || s.includes('\0') || s.includes('\\'))) {
      throw new Error(`invalid file key ${JSON.stringify(key)}`);
    }
    return path.join(this.root, ...segments);
  }

  async put(key: string, data: Buffer): Promise<void> {
    const file = this.pathOf(key);
    await fs.mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await fs.writeFile(tmp, data);
    await fs.rename(tmp, file);
  }

  async get(key: string): Promise<Buffer | undefined> {
    try {
      return await fs.readFile(this.pathOf(key));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.pathOf(key), { force: true });
  }

  async deleteAll(prefix: string): Promise<void> {
    await fs.rm(this.pathOf(prefix), { recursive: true, force: true });
  }
}
