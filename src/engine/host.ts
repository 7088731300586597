import type { LoopHost } from "../core/loop.js";
import { fsEnvFileReader } from "../runtime/env-files.js";
import { runScript } from "../runtime/script-runner.js";
import { warnToStderr } from "../os/stderr.js";
import type { ScriptSupervisor } from "../runtime/supervisor.js";
import { fsDirectoryReader } from "../runtime/workflow-files.js";
import { readVersionRequirement } from "../runtime/workflow-package.js";
import { VERSION } from "../version.js";

/** The loop's host for real runs: the project's files on disk, scripts through the supervisor, warnings to stderr. */
export function createLoopHost(supervisor: ScriptSupervisor): LoopHost {
  return {
    runScript: ({ script, workflow, label, env, stdin, onStdoutHeld }) => runScript(supervisor, script, label, workflow.dir, env, stdin, onStdoutHeld),
    warn: warnToStderr,
    directories: fsDirectoryReader,
    envFiles: fsEnvFileReader,
    versionRequirement: readVersionRequirement,
    version: VERSION,
  };
}
