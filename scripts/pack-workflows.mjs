// Packs examples/workflows/ (the ralph and converge workflows) into a gzip tarball that
// `loopx install` takes as a multi-workflow source: one wrapper directory, `workflows/`, holding
// one directory per workflow and no script files at its root. Reproducible: fixed mtimes, sorted
// entries, no owner names. `npm run build` writes dist/workflows.tar.gz with it; run alone:
// `node scripts/pack-workflows.mjs <out.tar.gz>`.
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as tar from "tar";

const root = fileURLToPath(new URL("..", import.meta.url));
const source = join(root, "examples");

/** Every path under examples/workflows, sorted; run-time leftovers (logs/, node_modules/) left out. */
function entries(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    if (name === "node_modules" || name === "logs" || name === "implementation_plan.md") continue;
    const path = join(dir, name);
    out.push(relative(source, path));
    if (statSync(path).isDirectory()) out.push(...entries(path));
  }
  return out;
}

export async function packWorkflows(file) {
  const list = ["workflows", ...entries(join(source, "workflows"))];
  await tar.c({ gzip: { level: 9 }, file, cwd: source, portable: true, noDirRecurse: true, mtime: new Date("2000-01-01T00:00:00Z") }, list);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2] ?? join(root, "dist", "workflows.tar.gz");
  await packWorkflows(file);
  console.log(`wrote ${file}`);
}
