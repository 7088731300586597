/**
 * `loopx install` (spec §10): detect the source, fetch it into a temp directory, classify and
 * select workflows, preflight all of them, then stage inside `.loopx/` and commit by rename.
 * Loaded only by the install command (dynamic import), so tar/semver never slow other commands.
 */
import { lstatSync, mkdirSync, mkdtempSync, realpathSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fsReason, LoopxError } from "../core/errors.js";
import { warnToStderr } from "../os/stderr.js";
import { VERSION } from "../version.js";
import { classifySource, selectWorkflows, type Classification, type SourceWorkflow } from "./classify.js";
import { Cleanup } from "./cleanup.js";
import { commitAll, stageAll } from "./commit.js";
import { describeSource, fetchSource, type SourceForm } from "./fetch.js";
import { preflight } from "./preflight.js";

export interface InstallRequest {
  /** A spec §10.1 source; with `form: "local"`, a path; with `form: "builtin"`, unused. */
  source: string;
  /** "spec" (the default): `source` as spec §10.1 reads it; the others are loopx's own (fetch.ts). */
  form?: SourceForm;
  /** -w: only these workflows of a multi-workflow source (none: all of them). */
  workflows?: string[];
  yes: boolean;
  projectRoot: string;
}

export interface InstallIO {
  stdout: (line: string) => void;
  warn: (message: string) => void;
}

const defaultIO: InstallIO = {
  stdout: (line) => process.stdout.write(`${line}\n`),
  warn: warnToStderr,
};

/** Whether `.loopx/` exists; an error if something that is not a directory is in the way. */
function loopxDirExists(loopxDir: string): boolean {
  try {
    lstatSync(loopxDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw new LoopxError(`cannot install: cannot access .loopx: ${fsReason(error)}`);
  }
  let isDir = false;
  try {
    isDir = statSync(loopxDir).isDirectory();
  } catch {
    // a broken symlink
  }
  if (!isDir) throw new LoopxError("cannot install: .loopx exists in the project root but is not a directory");
  return true;
}

/** Every workflow named (spec §10.8's -w, once per name), in the order named, each once; none named: all. */
function selectAll(classification: Classification, names: string[], shown: string): SourceWorkflow[] {
  if (names.length === 0) return selectWorkflows(classification, undefined, shown);
  const selected = names.flatMap((name) => selectWorkflows(classification, name, shown));
  return selected.filter((workflow, index) => selected.findIndex((other) => other.name === workflow.name) === index);
}

export async function install(request: InstallRequest, io: InstallIO = defaultIO): Promise<void> {
  const form = request.form ?? "spec";
  const { shown, check } = describeSource(form, request.source, request.projectRoot);
  check(); // a bad source is refused before anything else
  const loopxDir = join(request.projectRoot, ".loopx");
  loopxDirExists(loopxDir); // fail before any network access if .loopx is unusable

  const cleanup = new Cleanup();
  try {
    const work = mkdtempSync(join(tmpdir(), "loopx-install-"));
    cleanup.addPath(work);
    const { root, name } = await fetchSource(form, request.source, request.projectRoot, work, cleanup);
    const selected = selectAll(classifySource(root, name, shown), request.workflows ?? [], shown);
    const checked = await preflight(selected, { sourceRoot: root, loopxDir, yes: request.yes, version: VERSION });
    for (const warning of checked.warnings) io.warn(warning);
    if (checked.failures.length > 0) {
      throw new LoopxError(`cannot install from ${shown}: ${checked.failures.join("; ")}`);
    }

    // From here on everything is synchronous: a signal is handled only after commit, never midway.
    if (!loopxDirExists(loopxDir)) {
      mkdirSync(loopxDir);
      cleanup.addEmptyDir(loopxDir);
    }
    const staging = mkdtempSync(join(loopxDir, ".install-"));
    cleanup.addPath(staging);
    const staged = stageAll(checked.planned, staging, realpathSync.native(work));
    commitAll(staged, join(staging, ".replaced"));
    for (const workflow of staged) {
      io.stdout(`${workflow.replace ? "replaced" : "installed"} workflow ${JSON.stringify(workflow.name)} in .loopx/${workflow.name}`);
    }
  } catch (error) {
    // A signal made this fail (git was killed): the signal handler cleans up and exits.
    if (cleanup.interrupted) await new Promise<never>(() => undefined);
    if (error instanceof LoopxError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new LoopxError(`cannot install from ${shown}: ${message.replace(/\s*[\r\n]+\s*/g, " ")}`);
  } finally {
    cleanup.run();
    cleanup.dispose();
  }
}
