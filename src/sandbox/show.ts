import { realpathSync } from "node:fs";
import { join } from "node:path";
import { hiddenHome } from "./bwrap.js";
import { DEFAULT_READS, DENIED_READS, effectivePolicy, policyDigest, policySources } from "./policy.js";

/**
 * `loopx sandbox show <target>`: the effective policy of a `--sandbox` run of <target> here — what
 * every fenced run gets, then each layer (workflow, project, command line) with its file, then the
 * digest `run.start` records. `json`: the same as one object.
 */
export function describePolicy(request: { projectRoot: string; workflow: string; rules: readonly string[]; env: Record<string, string | undefined>; json?: boolean }): string {
  const projectRoot = realpathSync(request.projectRoot);
  const sources = policySources(projectRoot, request.workflow, request.rules);
  const policy = effectivePolicy(sources, projectRoot, request.env);
  const home = hiddenHome(request.env);
  const digest = policyDigest(policy, projectRoot);
  const always = {
    write: [projectRoot, "$LOOPX_TMPDIR", "the run's record (loopx note, loopx receipt)", "/tmp (private to each script, emptied when it ends)"],
    read: ["the whole file system except $HOME, /tmp and /run", "the directories on PATH (never one holding $HOME)", ...(home ? DEFAULT_READS.map((entry) => join(home, entry)) : [])],
    denied: home ? [`everything else in ${home}`, ...DENIED_READS.map((entry) => join(home, entry))] : [],
  };
  if (request.json) return JSON.stringify({ kind: "bwrap", projectRoot, policyDigest: digest, always, policy, layers: sources }, null, 2);
  const lines = [`sandbox policy for ${request.workflow} in ${projectRoot} (bubblewrap; digest ${digest})`];
  const list = (title: string, items: readonly string[]) => lines.push(`${title}:`, ...(items.length > 0 ? items.map((item) => `  ${item}`) : ["  (none)"]));
  list("writable", [...always.write, ...policy.write]);
  list("readable", [...always.read, ...policy.read]);
  list("hidden (never read)", always.denied);
  list("network (host:port; nothing else connects)", policy.network);
  lines.push("layers:");
  if (sources.length === 0) lines.push("  (none: no .loopx/<workflow>/sandbox.json, no .loopx/sandbox.json, no --sandbox-allow)");
  for (const source of sources) lines.push(`  ${source.name}${source.file ? ` (${source.file})` : ""}: ${JSON.stringify(source.layer)}`);
  return lines.join("\n");
}
