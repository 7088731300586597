// Packs examples/workflows/ (the ralph and converge workflows) into what users install: a gzip
// tarball that `loopx install` takes as a multi-workflow source (one wrapper directory,
// `workflows/`, holding one directory per workflow and no script files at its root), or the same
// tree as a directory, to commit as a git source (`loopx install <repo>`).
//
// The workflows' shared library has one source, examples/workflows/shared/; in the checkout each
// workflow's lib/shared is a symbolic link to it, so the examples run in place. An installed
// workflow can rely only on files inside its own directory (spec 10.3: a multi-workflow install
// copies each workflow's directory and nothing else), so the pack step copies shared/ into every
// workflow's lib/shared/ as plain files, and shared/ itself is not a workflow of the source.
//
// Reproducible: fixed mtimes, sorted entries, no owner names. `npm run build` writes
// dist/workflows.tar.gz with it; run alone:
//   node scripts/pack-workflows.mjs [<out.tar.gz>]      the tarball (default dist/workflows.tar.gz)
//   node scripts/pack-workflows.mjs --tree <dir>        the tree, <dir>/ralph, <dir>/converge
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as tar from "tar";

const root = fileURLToPath(new URL("..", import.meta.url));
export const WORKFLOWS_SOURCE = join(root, "examples", "workflows");
/** The one source of the library every workflow carries a copy of, and where each copy goes. */
export const SHARED = "shared";
export const SHARED_COPY = join("lib", "shared");

/** Run-time leftovers in a workflow directory used in place, never shipped. */
const LEFTOVERS = new Set(["node_modules", "logs", "implementation_plan.md"]);

/** The workflow directories of the source: every directory but shared/. */
export function workflowNames() {
  return readdirSync(WORKFLOWS_SOURCE)
    .filter((name) => name !== SHARED && statSync(join(WORKFLOWS_SOURCE, name)).isDirectory())
    .sort();
}

/** Writes the installable tree into `dir` (created): one self-contained directory per workflow. */
export function writeWorkflowTree(dir) {
  mkdirSync(dir, { recursive: true });
  for (const name of workflowNames()) {
    const from = join(WORKFLOWS_SOURCE, name);
    const to = join(dir, name);
    cpSync(from, to, {
      recursive: true,
      // The lib/shared link is replaced by a copy of shared/ below; leftovers stay behind.
      filter: (path) => !LEFTOVERS.has(relative(from, path).split("/").pop() ?? "") && !lstatSync(path).isSymbolicLink(),
    });
    cpSync(join(WORKFLOWS_SOURCE, SHARED), join(to, SHARED_COPY), { recursive: true, dereference: true });
  }
}

/** Every path under `dir`, sorted, directories before what they hold. */
function entries(dir, base) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    out.push(relative(base, path));
    if (statSync(path).isDirectory()) out.push(...entries(path, base));
  }
  return out;
}

export async function packWorkflows(file) {
  const stage = mkdtempSync(join(tmpdir(), "loopx-pack-workflows-"));
  try {
    writeWorkflowTree(join(stage, "workflows"));
    const list = ["workflows", ...entries(join(stage, "workflows"), stage)];
    await tar.c({ gzip: { level: 9 }, file, cwd: stage, portable: true, noDirRecurse: true, mtime: new Date("2000-01-01T00:00:00Z") }, list);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv[2] === "--tree") {
    if (!process.argv[3]) throw new Error("usage: node scripts/pack-workflows.mjs --tree <dir>");
    writeWorkflowTree(process.argv[3]);
    console.log(`wrote ${process.argv[3]}`);
  } else {
    const file = process.argv[2] ?? join(root, "dist", "workflows.tar.gz");
    await packWorkflows(file);
    console.log(`wrote ${file}`);
  }
}
