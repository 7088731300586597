/**
 * `loopx install` against hostile archives: decompression bombs (declared, trailing, gzip'd by the
 * server, compressed twice), Content-Length past the limit, huge entry counts, a hardlink through
 * a symlink, and the largest archives that must still install. Every failure exits 1 with a
 * one-line message, leaves `.loopx/` byte-for-byte as it was (no `.install-*` staging directory),
 * and leaves nothing in the install's own TMPDIR (fixtures/install/support.ts: failsCleanly).
 *
 * Already covered elsewhere, not repeated here: `..`/absolute paths, symlink and hardlink escapes,
 * devices and FIFOs (install-tarball "refuses an archive with %s"); a body cut short by a close,
 * truncated and corrupt gzip (install-tarball "fails cleanly on %s"); servers that hang before the
 * response or mid-body (install-interrupt "a server that goes silent $stall"); a missing file://
 * repository (install-git "reports git's own error for a repository that does not exist"); a
 * staging failure from ENAMETOOLONG (install-preflight "a staging failure (ENAMETOOLONG)").
 */
import { createReadStream, createWriteStream, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { constants, createGzip, gzipSync, type ZlibOptions } from "node:zlib";
import * as tar from "tar";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { RUNTIMES, makeProject, runLoopx, tempDir } from "../../helpers.js";
import { EXISTING, failsCleanly, installEnv, listDir, rawTarGz, responseHead, startRawServer, startServer, tarGzOfTree, type TestServer } from "../../fixtures/install/support.js";

const MiB = 1024 * 1024;
/** What the bombs expand to: 1.1 GiB, past the 1 GiB limit. */
const BOMB_BYTES = 1126 * MiB;
const LIMIT_BYTES = "the archive expands past 1 GiB (the limit for workflow archives)";
const LIMIT_DOWNLOAD = "the archive is larger than 1 GiB (the limit for workflow archives)";
const LIMIT_ENTRIES = "the archive has more than 200,000 entries (the limit for workflow archives)";

// ---------------------------------------------------------------------------------------------
// Streaming tar.gz writer (never holds the archive in memory)
// ---------------------------------------------------------------------------------------------

type Piece = { header: { path: string; type: "File" | "Directory"; size?: number }; body?: string } | { zeros: number };

function headerBlock(path: string, type: "File" | "Directory", size: number): Buffer {
  const block = Buffer.alloc(512);
  new tar.Header({ path, type, size, mode: type === "Directory" ? 0o755 : 0o644, mtime: new Date(1_700_000_000_000), uid: 0, gid: 0 }).encode(block);
  return block;
}

/** The tar stream of `pieces`, in chunks of about 1 MiB (a body's padding is added; `zeros` are raw zero bytes). */
async function* tarStream(pieces: Iterable<Piece>): AsyncGenerator<Buffer> {
  const zero = Buffer.alloc(MiB);
  let batch: Buffer[] = [];
  let batched = 0;
  const push = (buffer: Buffer): Buffer | undefined => {
    batch.push(buffer);
    batched += buffer.length;
    if (batched < MiB) return undefined;
    const out = Buffer.concat(batch);
    batch = [];
    batched = 0;
    return out;
  };
  for (const piece of pieces) {
    if ("zeros" in piece) {
      const pending = Buffer.concat(batch);
      batch = [];
      batched = 0;
      if (pending.length > 0) yield pending;
      for (let left = piece.zeros; left > 0; left -= zero.length) yield left >= zero.length ? zero : zero.subarray(0, left);
      continue;
    }
    const body = Buffer.from(piece.body ?? "");
    const size = piece.header.size ?? (piece.header.type === "File" ? body.length : 0);
    let out = push(headerBlock(piece.header.path, piece.header.type, size));
    if (out) yield out;
    if (body.length > 0) {
      out = push(Buffer.concat([body, Buffer.alloc((512 - (body.length % 512)) % 512)]));
      if (out) yield out;
    }
  }
  if (batch.length > 0) yield Buffer.concat(batch);
}

/**
 * How the fixtures are compressed (what loopx reads is ordinary gzip either way). The bombs are
 * mostly zeros: run-length deflate gives the same ~1 MiB per 1.1 GiB as level 9, eight times
 * faster. The entry-heavy archives use level 1: a few MiB instead of ~1.4, a fraction of level 9's
 * 16 s of CPU for 200,000 headers.
 */
const ZEROS: ZlibOptions = { level: 9, strategy: constants.Z_RLE };
const ENTRIES: ZlibOptions = { level: 1 };

async function writeTarGz(file: string, pieces: Iterable<Piece>, gzip: ZlibOptions = ENTRIES): Promise<string> {
  await pipeline(Readable.from(tarStream(pieces)), createGzip(gzip), createWriteStream(file));
  return file;
}

const EOF_BLOCKS: Piece = { zeros: 1024 };

// ---------------------------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------------------------

/** Serves `file` (a stream, never buffered) with the given extra headers. */
function sendFile(res: ServerResponse, file: string, headers: Record<string, string> = {}): void {
  res.writeHead(200, { "content-type": "application/gzip", "content-length": statSync(file).size, ...headers });
  createReadStream(file).pipe(res);
}


// ---------------------------------------------------------------------------------------------
// Shared checks
// ---------------------------------------------------------------------------------------------


/** Number of entries (files, directories, links) under `dir`, not counting `dir`. */
function countEntries(dir: string): { files: number; dirs: number } {
  let files = 0;
  let dirs = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      dirs += 1;
      const inner = countEntries(join(dir, entry.name));
      files += inner.files;
      dirs += inner.dirs;
    } else files += 1;
  }
  return { files, dirs };
}

// ---------------------------------------------------------------------------------------------
// Archives made once for every runtime
// ---------------------------------------------------------------------------------------------

const archives = { declaredBomb: "", trailingBomb: "", many: "", tooMany: "", padded: "" };
let archiveDir = "";
/** 100,000 entries: the wrapper, index.sh, 100 directories, 99,898 one-line files. */
const MANY_DIRS = 100;
const MANY_FILES = 100_000 - 2 - MANY_DIRS;

beforeAll(async () => {
  const dir = (archiveDir = tempDir("loopx-fire-"));
  const started = Date.now();
  const small: Piece[] = [
    { header: { path: "bomb/", type: "Directory" } },
    { header: { path: "bomb/index.sh", type: "File" }, body: "#!/bin/bash\necho '{\"stop\":true}'\n" },
  ];
  function* many(): Generator<Piece> {
    yield { header: { path: "many/", type: "Directory" } };
    yield { header: { path: "many/index.sh", type: "File" }, body: "#!/bin/bash\necho '{\"stop\":true}'\n" };
    for (let d = 0; d < MANY_DIRS; d++) yield { header: { path: `many/d${String(d).padStart(3, "0")}/`, type: "Directory" } };
    for (let i = 0; i < MANY_FILES; i++) {
      yield { header: { path: `many/d${String(i % MANY_DIRS).padStart(3, "0")}/f${i}.md`, type: "File" }, body: `${i}\n` };
    }
    yield EOF_BLOCKS;
  }
  function* tooMany(): Generator<Piece> {
    yield { header: { path: "lots/", type: "Directory" } };
    yield { header: { path: "lots/index.sh", type: "File" }, body: "echo\n" };
    yield { header: { path: "lots/e/", type: "Directory" } };
    for (let i = 0; i < 200_001 - 3; i++) yield { header: { path: `lots/e/${i}`, type: "File" } };
    yield EOF_BLOCKS;
  }
  [archives.declaredBomb, archives.trailingBomb, archives.many, archives.tooMany, archives.padded] = await Promise.all([
    // One file entry that declares (and holds) 1.1 GiB of zeros.
    writeTarGz(join(dir, "declared.tgz"), [...small, { header: { path: "bomb/zeros.bin", type: "File", size: BOMB_BYTES } }, { zeros: BOMB_BYTES }, EOF_BLOCKS], ZEROS),
    // A small valid archive followed by 1.1 GiB of zeros: nothing declares it, only decompressing shows it.
    writeTarGz(join(dir, "trailing.tgz"), [...small, { zeros: BOMB_BYTES }], ZEROS),
    writeTarGz(join(dir, "many.tgz"), many()),
    writeTarGz(join(dir, "toomany.tgz"), tooMany()),
    // The same small archive padded with 1 MiB of zeros, as tar tools pad to their record size.
    writeTarGz(join(dir, "padded.tgz"), [...small, { zeros: MiB }], ZEROS),
  ]);
  if (process.env["DEBUG_FIRE"]) {
    const sizes = Object.entries(archives).map(([name, file]) => `${name} ${statSync(file).size} B`);
    console.log(`archives made in ${Date.now() - started} ms: ${sizes.join(", ")}`);
  }
}, 120_000);

afterAll(() => {
  if (archiveDir) rmSync(archiveDir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// Archives: bombs and entry counts
// ---------------------------------------------------------------------------------------------

// Both runtimes and all cases at once: the cases are independent (own project, TMPDIR, server),
// and the big ones wait on the disk or decompress on one core, so they overlap well.
describe.concurrent.each(RUNTIMES)("loopx install: hostile archives ($name)", (runtime) => {
  /** `server`, stopped when the test ends. */
  function stoppedAfter(context: TestContext, server: TestServer): TestServer {
    context.onTestFinished(() => server.stop());
    return server;
  }
  async function serveFile(context: TestContext, file: string, headers: Record<string, string> = {}): Promise<TestServer> {
    return stoppedAfter(context, await startServer((_req, res) => sendFile(res, file, headers)));
  }

  it("refuses a bomb whose entry declares 1.1 GiB at once, from its header, without expanding it", async (context) => {
    expect(statSync(archives.declaredBomb).size).toBeLessThan(2 * MiB);
    const server = await serveFile(context, archives.declaredBomb);
    const outcome = await failsCleanly(runtime, ["-y", `${server.origin}/bomb.tgz`], new RegExp(`^loopx: refusing to install http://127\\.0\\.0\\.1:\\d+/bomb\\.tgz: ${LIMIT_BYTES.replace(/[()]/g, "\\$&")}\\n$`));
    expect(outcome.ms).toBeLessThan(10_000); // expanding 1.1 GiB would take longer than refusing at the header
  });

  it("refuses a bomb hidden after a small valid archive, as soon as decompression passes 1 GiB", async (context) => {
    const server = await serveFile(context, archives.trailingBomb);
    await failsCleanly(runtime, ["-y", `${server.origin}/bomb.tgz`], new RegExp(`^loopx: refusing to install http://127\\.0\\.0\\.1:\\d+/bomb\\.tgz: ${LIMIT_BYTES.replace(/[()]/g, "\\$&")}\\n$`));
  });

  it("refuses a server that gzips the response (Content-Encoding) into more than 1 GiB, while downloading", async (context) => {
    const server = await serveFile(context, archives.trailingBomb, { "content-encoding": "gzip" });
    await failsCleanly(runtime, [`${server.origin}/enc.tgz`], new RegExp(`^loopx: cannot download http://127\\.0\\.0\\.1:\\d+/enc\\.tgz: ${LIMIT_DOWNLOAD.replace(/[()]/g, "\\$&")}\\n$`));
  });

  it("refuses a download whose Content-Length announces more than 1 GiB before reading the body", async (context) => {
    const server = stoppedAfter(context, await startRawServer((socket) => socket.write(`${responseHead(2 * 1024 * MiB)}partial`))); // then nothing
    const outcome = await failsCleanly(runtime, [`${server.origin}/huge.tgz`], new RegExp(`^loopx: cannot download http://127\\.0\\.0\\.1:\\d+/huge\\.tgz: ${LIMIT_DOWNLOAD.replace(/[()]/g, "\\$&")}\\n$`));
    expect(outcome.ms).toBeLessThan(10_000); // well before the 15 s stall timeout
  });

  it("refuses an archive of more than 200,000 entries", async (context) => {
    const server = await serveFile(context, archives.tooMany);
    await failsCleanly(runtime, [`${server.origin}/lots.tgz`], new RegExp(`^loopx: refusing to install http://127\\.0\\.0\\.1:\\d+/lots\\.tgz: ${LIMIT_ENTRIES.replace(/[()]/g, "\\$&")}\\n$`));
  });

  it("refuses an archive compressed twice (its inner layer would expand uncounted)", async (context) => {
    const twice = gzipSync(tarGzOfTree({ "index.sh": "echo\n" }, "twice"));
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-length": twice.length });
      res.end(twice);
    });
    stoppedAfter(context, server);
    await failsCleanly(runtime, [`${server.origin}/twice.tgz`], /^loopx: cannot extract http:\/\/127\.0\.0\.1:\d+\/twice\.tgz: not a valid \.tar\.gz archive \(it is compressed twice\)\n$/);
  });

  it("refuses a hardlink whose target passes through a symlink in the archive (link(2) would follow it)", async (context) => {
    const body = rawTarGz([
      { path: "flow/", type: "Directory" },
      { path: "flow/index.sh", body: "echo\n" },
      { path: "flow/up", type: "SymbolicLink", linkpath: ".." },
      { path: "flow/h", type: "Link", linkpath: "flow/up/flow/index.sh" },
    ]);
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-length": body.length });
      res.end(body);
    });
    stoppedAfter(context, server);
    await failsCleanly(runtime, ["-y", `${server.origin}/flow.tgz`], /^loopx: refusing to install http:\/\/127\.0\.0\.1:\d+\/flow\.tgz: hardlink "flow\/h" points through symlink "flow\/up"\n$/);
  });

  it("installs an archive padded with zeros after its end (as tar tools pad it), under the limit", async (context) => {
    const server = await serveFile(context, archives.padded);
    const cwd = makeProject();
    const { env, tmp } = installEnv();
    const result = await runLoopx(runtime, ["install", `${server.origin}/padded.tgz`], { cwd, env });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(listDir(join(cwd, ".loopx", "padded"))).toEqual(["index.sh"]);
    expect(listDir(tmp)).toEqual([]);
  });
});

// After the cases above, not beside them: 100,000 files are bound by the disk and node-tar, and
// beside four 1 GiB decompressions a loaded CI box once took it past 300 s. One runtime is enough:
// node-tar writes the same way under both.
describe("loopx install: the largest archive that must install", () => {
  const runtime = RUNTIMES[0]!;
  it("installs an archive of 100,000 tiny entries, every one of them", async (context) => {
    const server = await startServer((_req, res) => sendFile(res, archives.many));
    context.onTestFinished(() => server.stop());
    const cwd = makeProject(EXISTING);
    const { env, tmp } = installEnv();
    const started = Date.now();
    const result = await runLoopx(runtime, ["install", `${server.origin}/many.tgz`], { cwd, env, timeoutMs: 300_000 });
    const ms = Date.now() - started;
    console.log(`[${runtime.name}] install of 100,000 entries: ${ms} ms`); // seconds, mostly file-system bound
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('installed workflow "many" in .loopx/many\n');
    expect(listDir(join(cwd, ".loopx"))).toEqual(["bomb", "flow", "keep", "many", "notes.md"]);
    expect(countEntries(join(cwd, ".loopx", "many"))).toEqual({ files: MANY_FILES + 1, dirs: MANY_DIRS });
    expect(readFileSync(join(cwd, ".loopx", "many", "d042", "f99842.md"), "utf8")).toBe("99842\n");
    expect(listDir(tmp)).toEqual([]);
    rmSync(cwd, { recursive: true, force: true }); // 100,000 files: not left in the machine's TMPDIR
  }, 320_000);
});
