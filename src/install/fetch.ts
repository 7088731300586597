import { cpSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fsReason, LoopxError } from "../core/errors.js";
import { SHIPPED, shippedArchive } from "./builtin.js";
import type { Cleanup } from "./cleanup.js";
import { downloadToFile } from "./download.js";
import { extractTarball, stripWrapper } from "./extract.js";
import { cloneRepository } from "./git.js";
import { detectSource, displayUrl } from "./source.js";

/**
 * Where an install's files come from, brought into the scratch directory `work`: the spec §10.1
 * sources (git, tarball URL), and loopx's own two forms, which no spec-defined source reaches:
 * `builtin` (the workflows shipped with loopx) and `local` (a directory or .tar.gz/.tgz on disk).
 */
export type SourceForm = "spec" | "builtin" | "local";

export interface FetchedSource {
  /** The source root to classify (spec §10.3). */
  root: string;
  /** The name of a single-workflow source. */
  name: string;
  /** The source as messages name it. */
  shown: string;
}

const ARCHIVE = /\.(tar\.gz|tgz)$/;

/** Checked before anything is fetched: the spec source's form, or the local path's kind. */
export function describeSource(form: SourceForm, source: string, cwd: string): { shown: string; check: () => void } {
  if (form === "builtin") return { shown: SHIPPED, check: () => undefined };
  if (form === "local") return { shown: source, check: () => void localKind(resolve(cwd, source), source) };
  return { shown: displayUrl(source), check: () => void detectSource(source) };
}

function localKind(path: string, given: string): "dir" | "archive" {
  let stat;
  try {
    stat = statSync(path);
  } catch (error) {
    throw new LoopxError(`cannot install from ${given}: ${fsReason(error)}`);
  }
  if (stat.isDirectory()) return "dir";
  if (stat.isFile() && ARCHIVE.test(path)) return "archive";
  throw new LoopxError(`cannot install from ${given}: --local takes a directory or a .tar.gz / .tgz archive`);
}

async function extracted(archive: string, work: string, shown: string): Promise<string> {
  const dest = join(work, "extracted");
  mkdirSync(dest);
  await extractTarball(archive, dest, shown);
  return stripWrapper(dest);
}

export async function fetchSource(form: SourceForm, source: string, cwd: string, work: string, cleanup: Cleanup): Promise<FetchedSource> {
  if (form === "builtin") return { root: await extracted(shippedArchive(join(work, "workflows.tar.gz")), work, SHIPPED), name: "workflows", shown: SHIPPED };
  if (form === "local") {
    const path = resolve(cwd, source);
    if (localKind(path, source) === "archive") {
      return { root: await extracted(path, work, source), name: basename(path).replace(ARCHIVE, ""), shown: source };
    }
    // A copy, as a clone is one: the install reads a tree nobody changes meanwhile; no .git.
    const root = join(work, "local");
    try {
      cpSync(path, root, { recursive: true, verbatimSymlinks: true, filter: (entry) => entry !== join(path, ".git") });
    } catch (error) {
      throw new LoopxError(`cannot install from ${source}: ${fsReason(error)}`);
    }
    return { root, name: basename(realpathSync(path)), shown: source };
  }
  const detected = detectSource(source);
  const shown = displayUrl(source);
  if (detected.kind === "git") {
    const root = join(work, "repo");
    await cloneRepository(detected.url, root, cleanup);
    return { root, name: detected.name, shown };
  }
  const archive = join(work, "download.tar.gz");
  await downloadToFile(detected.url, archive);
  return { root: await extracted(archive, work, shown), name: detected.name, shown };
}
