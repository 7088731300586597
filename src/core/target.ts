import { isValidName } from "./names.js";

/** A fully resolved `workflow:script` pair. */
export interface Target {
  workflow: string;
  script: string;
}

/** A parsed target string: the script part is absent for a bare name. */
export interface ParsedTarget {
  workflow?: string;
  script?: string;
  /** The single name when the string had no colon; its meaning depends on context (run vs goto). */
  bare?: string;
}

/**
 * Validates a target string per spec §4.1 and splits it. Returns an error message (naming what is
 * wrong) instead of throwing so callers decide when the error surfaces (after discovery for `run`,
 * at transition time for goto).
 */
export function parseTarget(value: string): { ok: true; target: ParsedTarget } | { ok: false; error: string } {
  const shown = JSON.stringify(value);
  if (value === "") return { ok: false, error: "invalid target \"\": the target is empty" };
  const parts = value.split(":");
  if (parts.length > 2) {
    return { ok: false, error: `invalid target ${shown}: a target may contain at most one ':'` };
  }
  if (parts.length === 1) {
    if (!isValidName(value)) return { ok: false, error: `invalid target ${shown}: ${nameProblem(value)}` };
    return { ok: true, target: { bare: value } };
  }
  const [workflow, script] = parts as [string, string];
  if (workflow === "" && script === "") return { ok: false, error: `invalid target ${shown}: a bare ':' names nothing` };
  if (workflow === "") return { ok: false, error: `invalid target ${shown}: the workflow before ':' is missing` };
  if (script === "") {
    return {
      ok: false,
      error: `invalid target ${shown}: the script after ':' is missing (use "${workflow}" or "${workflow}:index")`,
    };
  }
  if (!isValidName(workflow)) return { ok: false, error: `invalid target ${shown}: workflow ${nameProblem(workflow)}` };
  if (!isValidName(script)) return { ok: false, error: `invalid target ${shown}: script ${nameProblem(script)}` };
  return { ok: true, target: { workflow, script } };
}

function nameProblem(name: string): string {
  return `name ${JSON.stringify(name)} must match [a-zA-Z0-9_][a-zA-Z0-9_-]*`;
}

/** `run` addresses workflows: a bare name is a workflow and means its `index` script (spec §2.2). */
export function runTargetOf(parsed: ParsedTarget): { workflow: string; script: string; explicitScript: boolean } {
  if (parsed.bare !== undefined) return { workflow: parsed.bare, script: "index", explicitScript: false };
  return { workflow: parsed.workflow!, script: parsed.script!, explicitScript: true };
}

/** goto addresses scripts: a bare name is a script in the current workflow (spec §2.2). */
export function gotoTargetOf(parsed: ParsedTarget, currentWorkflow: string): Target {
  if (parsed.bare !== undefined) return { workflow: currentWorkflow, script: parsed.bare };
  return { workflow: parsed.workflow!, script: parsed.script! };
}

/** A resolved target string as recorded (`workflow:script`, checked when it was resolved) split in two. */
export function splitTarget(resolved: string): Target {
  const colon = resolved.indexOf(":");
  return colon < 0 ? { workflow: resolved, script: "" } : { workflow: resolved.slice(0, colon), script: resolved.slice(colon + 1) };
}

/** The workflow of a resolved target string. */
export function workflowOf(resolved: string): string {
  return splitTarget(resolved).workflow;
}

export function formatTarget(target: Target): string {
  return `${target.workflow}:${target.script}`;
}
