import { closeSync, createReadStream, lstatSync, openSync, readSync, readdirSync, type ReadStream } from "node:fs";
import { join, posix } from "node:path";
import type { Readable } from "node:stream";
import { createGunzip, type Gunzip } from "node:zlib";
import * as tar from "tar";
import { LoopxError } from "../core/errors.js";
import { MAX_ARCHIVE_BYTES, MAX_ARCHIVE_ENTRIES, TOO_LARGE_EXPANDED, TOO_MANY_ENTRIES } from "./limits.js";
import { unsafeEntries } from "./tree.js";

const ALLOWED_TYPES = new Set(["File", "OldFile", "ContiguousFile", "Directory", "GNUDumpDir", "SymbolicLink", "Link"]);

function describeType(type: string): string {
  switch (type) {
    case "CharacterDevice":
      return "a character device";
    case "BlockDevice":
      return "a block device";
    case "FIFO":
      return "a FIFO";
    default:
      return `of unsupported type ${type}`;
  }
}

/**
 * Checks archive entries as they are read, before anything is written: refuses `..` segments,
 * absolute paths, symlinks whose target leaves the archive, hardlinks to anything outside it,
 * entries placed under (or over) an earlier symlink, and device files/FIFOs. `check` returns the
 * reason an entry is refused, or undefined.
 */
class EntryChecker {
  private readonly symlinks = new Set<string>();

  check(path: string, type: string, linkpath: string | undefined): string | undefined {
    const entry = JSON.stringify(path);
    if (!ALLOWED_TYPES.has(type)) return `entry ${entry} is ${describeType(type)}`;
    if (path === "") return "an entry has an empty path";
    if (path.startsWith("/")) return `entry ${entry} has an absolute path`;
    if (path.split("/").includes("..")) return `entry ${entry} has a ".." path segment`;
    const normalized = posix.normalize(path).replace(/\/+$/, "");
    const parts = normalized.split("/");
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join("/");
      if (this.symlinks.has(prefix)) return `entry ${entry} lies inside symlink ${JSON.stringify(prefix)}`;
    }
    if (this.symlinks.has(normalized)) return `entry ${entry} would replace the symlink of the same name`;
    if (type === "SymbolicLink") {
      const target = linkpath ?? "";
      if (target === "") return `symlink ${entry} has an empty target`;
      if (target.startsWith("/")) return `symlink ${entry} points to an absolute path (${JSON.stringify(target)})`;
      const resolved = posix.normalize(posix.join(posix.dirname(normalized), target));
      if (resolved === ".." || resolved.startsWith("../")) return `symlink ${entry} points outside the archive (-> ${JSON.stringify(target)})`;
      this.symlinks.add(normalized);
    } else if (type === "Link") {
      const target = linkpath ?? "";
      if (target === "") return `hardlink ${entry} has an empty target`;
      if (target.startsWith("/")) return `hardlink ${entry} points to an absolute path (${JSON.stringify(target)})`;
      if (target.split("/").includes("..")) return `hardlink ${entry} points outside the archive (-> ${JSON.stringify(target)})`;
      const targetParts = posix.normalize(target).split("/");
      for (let i = 1; i <= targetParts.length; i++) {
        const prefix = targetParts.slice(0, i).join("/");
        if (this.symlinks.has(prefix)) return `hardlink ${entry} points through symlink ${JSON.stringify(prefix)}`;
      }
    }
    return undefined;
  }
}

function archiveError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^TAR_BAD_ARCHIVE:\s*/, "").replace(/\s*[\r\n]+\s*/g, " ");
}

/** Why the stream is not a valid .tar.gz at the gzip level: a corrupt gzip stream, or one compressed twice. */
class BadArchive extends Error {}

function startsWithGzipMagic(file: string): boolean {
  const fd = openSync(file, "r");
  try {
    const magic = Buffer.alloc(2);
    return readSync(fd, magic, 0, 2, 0) === 2 && magic[0] === 0x1f && magic[1] === 0x8b;
  } finally {
    closeSync(fd);
  }
}

/** The archive's bytes as read from `file`, gunzipped here when `gzipped`; `stop` stops reading them. */
function openArchive(file: string, gzipped: boolean): { input: ReadStream; gunzip: Gunzip | undefined; source: Readable; stop: () => void } {
  const input = createReadStream(file);
  const gunzip = gzipped ? createGunzip() : undefined;
  const source: Readable = gunzip ? input.pipe(gunzip) : input;
  const stop = (): void => {
    input.destroy();
    gunzip?.destroy();
  };
  return { input, gunzip, source, stop };
}

/** Ends a pump early with a refusal (a limit or an entry check). */
type Refuse = (reason: string) => void;

/**
 * Streams the archive `file` into `sink` (a node-tar Parser or UnpackSync), gunzipping it here when it
 * is gzipped so that every expanded byte is counted, with backpressure, so nothing is held in
 * memory. Resolves with the refusal passed to `refuse` (which stops reading at once), with
 * {@link TOO_LARGE_EXPANDED} as soon as the expanded stream passes {@link MAX_ARCHIVE_BYTES}, or with
 * undefined once `sink` has closed. Nothing after the tar end-of-archive blocks is given to `sink`
 * (node-tar would keep all of it in memory); with `countTrailing` those bytes are still expanded
 * and counted, so the limit covers the whole stream. Rejects with {@link BadArchive} for a corrupt
 * gzip stream or an archive compressed twice (node-tar would expand the inner layer uncounted), and
 * with `sink`'s own error otherwise.
 */
function pumpArchive(file: string, countTrailing: boolean, makeSink: (refuse: Refuse) => tar.Parser): Promise<string | undefined> {
  const gzipped = startsWithGzipMagic(file);
  return new Promise((resolve, reject) => {
    let settled = false;
    let expanded = 0;
    let head = Buffer.alloc(0); // the first two expanded bytes
    let sawEnd = false;
    let sinkClosed = false;
    let sourceEnded = false;
    const { input, gunzip, source, stop } = openArchive(file, gzipped);
    const finish = (error: Error | undefined, refusal?: string): void => {
      if (settled) return;
      settled = true;
      stop();
      if (error) reject(error);
      else resolve(refusal);
    };
    const maybeDone = (): void => {
      if (sinkClosed && (sourceEnded || !countTrailing)) finish(undefined);
    };
    const sink = makeSink((reason) => finish(undefined, reason));
    watchSink(sink, finish, {
      atEnd: () => {
        sawEnd = true;
        if (countTrailing) source.resume();
        else stop();
      },
      closed: () => {
        sinkClosed = true;
        maybeDone();
      },
    });
    input.on("error", (error) => finish(error));
    gunzip?.on("error", (error) => finish(new BadArchive(`zlib: ${archiveError(error)}`)));
    source.on("data", (chunk: Buffer) => {
      if (settled) return;
      if (gzipped && head.length < 2) {
        head = Buffer.concat([head, chunk.subarray(0, 2 - head.length)]);
        if (head.length === 2 && head[0] === 0x1f && head[1] === 0x8b) return finish(new BadArchive("it is compressed twice"));
      }
      expanded += chunk.length;
      if (expanded > MAX_ARCHIVE_BYTES) return finish(undefined, TOO_LARGE_EXPANDED);
      if (sawEnd) return; // after the end-of-archive blocks: counted, never parsed
      const failed = writeWithBackpressure(sink, source, chunk);
      if (failed) return finish(failed.error);
    });
    source.on("end", () => {
      sourceEnded = true;
      try {
        if (!sawEnd) sink.end();
      } catch (error) {
        return finish(error as Error);
      }
      maybeDone();
    });
  });
}

/**
 * Watches `sink`: its errors go to `finish`, its close to `closed`. At the tar end-of-archive blocks
 * (once) it is ended on the next tick and `atEnd` is told.
 */
function watchSink(sink: tar.Parser, finish: (error: Error) => void, on: { atEnd: () => void; closed: () => void }): void {
  let sawEnd = false;
  sink.on("error", (error: Error) => finish(error));
  sink.on("close", on.closed);
  sink.on("eof", () => {
    if (sawEnd) return;
    sawEnd = true;
    process.nextTick(() => {
      try {
        sink.end();
      } catch (error) {
        finish(error as Error);
      }
    });
    on.atEnd();
  });
}

/** Writes `chunk` to `sink`, pausing `source` until the sink drains; what the sink threw, if it did. */
function writeWithBackpressure(sink: tar.Parser, source: Readable, chunk: Buffer): { error: Error } | undefined {
  let flowing: boolean;
  try {
    flowing = sink.write(chunk);
  } catch (error) {
    return { error: error as Error };
  }
  if (!flowing) {
    source.pause();
    sink.once("drain", () => source.resume());
  }
  return undefined;
}

/**
 * Extracts the gzipped tarball `file` into `dest` (an empty directory) with node-tar. The whole
 * archive is validated by a listing pass first — the entry checks, and the limits: at most
 * {@link MAX_ARCHIVE_ENTRIES} entries, and at most {@link MAX_ARCHIVE_BYTES} expanded (anticipated
 * from each entry's declared size, and counted as the stream is decompressed) — so a hostile
 * archive writes nothing at all; the extraction pass applies the same entry checks again and runs
 * in strict mode (any tar warning is an error). Finally the extracted tree is checked for symlinks
 * that escape through other links.
 */
export async function extractTarball(file: string, dest: string, shown: string): Promise<void> {
  // zstd/brotli detection off (gzip is decompressed by pumpArchive itself).
  const formats = { strict: true, zstd: false, brotli: false } as const;
  let refused: string | undefined;
  const listChecker = new EntryChecker();
  try {
    refused = await pumpArchive(file, true, (refuse) => {
      let entries = 0;
      let declared = 0;
      return new tar.Parser({
        ...formats,
        onReadEntry: (entry) => {
          entry.resume();
          entries += 1;
          declared += entry.size ?? 0;
          if (entries > MAX_ARCHIVE_ENTRIES) return refuse(TOO_MANY_ENTRIES);
          if (declared > MAX_ARCHIVE_BYTES) return refuse(TOO_LARGE_EXPANDED);
          const reason = listChecker.check(entry.path, entry.type, entry.linkpath);
          if (reason !== undefined) refuse(reason);
        },
      });
    });
  } catch (error) {
    throw new LoopxError(`cannot extract ${shown}: not a valid .tar.gz archive (${archiveError(error)})`);
  }
  if (refused) throw new LoopxError(`refusing to install ${shown}: ${refused}`);

  // UnpackSync does each chunk's file writes synchronously (several times faster than Unpack for
  // many small files); the event loop still turns between chunks, so a signal is handled at once.
  const extractChecker = new EntryChecker();
  try {
    await pumpArchive(
      file,
      false,
      () =>
        new tar.UnpackSync({
          ...formats,
          cwd: dest,
          preserveOwner: false,
          filter: (path, entry) => {
            const reason = extractChecker.check(path, (entry as tar.ReadEntry).type, (entry as tar.ReadEntry).linkpath);
            refused ??= reason;
            return reason === undefined;
          },
        }),
    );
  } catch (error) {
    throw new LoopxError(`cannot extract ${shown}: ${archiveError(error)}`);
  }
  if (refused) throw new LoopxError(`refusing to install ${shown}: ${refused}`);

  const unsafe = unsafeEntries(dest, "the archive");
  if (unsafe.length > 0) throw new LoopxError(`refusing to install ${shown}: ${unsafe.join("; ")}`);
}

/** The source root of an extracted archive: its single top-level directory, if that is all there is. */
export function stripWrapper(dir: string): string {
  const entries = readdirSync(dir);
  if (entries.length === 1) {
    const only = join(dir, entries[0]!);
    if (lstatSync(only).isDirectory()) return only;
  }
  return dir;
}
