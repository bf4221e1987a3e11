import { randomUUID } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { RecordScansRequestSchema, type Scan } from "@qrplatform/api/links";

const SUFFIX = ".scans";

/** A spooled batch: its scans, read when needed, and how to forget it once they are stored. */
interface SpooledBatch {
  read(): Promise<Scan[]>;
  remove(): Promise<void>;
}

/**
 * Batches that could not be stored yet, kept on disk so a hard kill while Postgres is away loses
 * nothing that was spooled. One file per batch (a RecordScansRequest in protobuf binary), written to a
 * temporary name, synced, then renamed, so a file that exists is whole. Names start with the time, so
 * batches are replayed oldest first.
 */
export class ScanSpool {
  private created: Promise<unknown> | undefined;

  constructor(private readonly dir: string) {}

  async write(scans: Scan[]): Promise<void> {
    this.created ??= mkdir(this.dir, { recursive: true, mode: 0o700 }).catch((error: unknown) => {
      this.created = undefined;
      throw error;
    });
    await this.created;
    const name = `${Date.now().toString().padStart(15, "0")}-${randomUUID()}`;
    const temporary = join(this.dir, `${name}.partial`);
    const file = await open(temporary, "w", 0o600);
    try {
      await file.writeFile(toBinary(RecordScansRequestSchema, create(RecordScansRequestSchema, { scans })));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, join(this.dir, name + SUFFIX));
  }

  /** The spooled batches, oldest first, listed once. */
  async batches(): Promise<SpooledBatch[]> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((name) => name.endsWith(SUFFIX)).sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    return names.map((name) => {
      const path = join(this.dir, name);
      return {
        read: async () => fromBinary(RecordScansRequestSchema, await readFile(path)).scans,
        remove: () => rm(path, { force: true }),
      };
    });
  }
}
