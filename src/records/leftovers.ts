import { processEnvironment, processesWithVariable } from "../os/procfs.js";
import { shellWord } from "../core/shell-word.js";
import { shownText } from "../core/untrusted-text.js";
import type { RunSummary } from "./run-state.js";

/**
 * What a run left behind when loopx and its guardian were both killed (`kill -9` of both, an
 * out-of-memory kill, `kill -9 -1`): no `run.end`, and nobody ended its scripts' processes or
 * removed its LOOPX_TMPDIR. `loopx runs` names the processes still carrying such a run's
 * LOOPX_RUN_ID and offers one command that ends them and removes the scratch directory (read from
 * their environment). Only for runs listed as crashed without an end: one /proc scan each, rare.
 */
export function leftoverLines(summaries: RunSummary[]): string {
  let text = "";
  for (const run of summaries) {
    if (run.state !== "crashed" || run.exitCode !== undefined) continue;
    const carriers = processesWithVariable(`LOOPX_RUN_ID=${run.id}`);
    if (carriers.length === 0) continue;
    const scratch = scratchOf(carriers.map((carrier) => carrier.pid));
    const shown = carriers.map(({ pid, command }) => `${pid} (${shownText(command.length > 40 ? `${command.slice(0, 40)}…` : command)})`).join(", ");
    const command = `kill -TERM ${carriers.map((carrier) => carrier.pid).join(" ")}${scratch ? ` && rm -rf ${shellWord(scratch)}` : ""}`;
    text += `run ${run.id} crashed (loopx and its guardian are gone) but ${carriers.length} of its processes still run: ${shown}; to end them${scratch ? " and remove its scratch directory" : ""}: ${command}\n`;
  }
  return text;
}

/** LOOPX_TMPDIR from the first carrier whose environment says it (a loopx scratch directory only). */
function scratchOf(pids: number[]): string | undefined {
  for (const pid of pids) {
    const entry = processEnvironment(pid)
      ?.toString("utf8")
      .split("\0")
      .find((line: string) => line.startsWith("LOOPX_TMPDIR="));
    const path = entry?.slice("LOOPX_TMPDIR=".length);
    if (path && /\/loopx-[A-Za-z0-9]+$/.test(path)) return path;
  }
  return undefined;
}
