import { commandSpec, loadCommandGroups, type CommandGroups, type CommandSpec } from "./command-spec.js";

/**
 * Shell completion (loopx's own addition): `loopx completion bash|zsh|fish` prints a script whose
 * only logic is to ask `loopx __complete "<line up to the cursor>"` for candidates, one per line.
 * The candidates come from the command classes' one declaration (command-spec.ts: commands,
 * options, what kind of value each takes) and, for values, from where they live: targets from .loopx/, run
 * ids from the run records, variable names from the global env file. `__files__` alone asks the
 * shell for its own file-name completion.
 */

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

/** Asks the shell to complete file names. */
const FILES = "__files__";

/** The completion script for `shell`, for `eval "$(loopx completion bash)"` and the like. */
export function completionScript(shell: Shell): string {
  switch (shell) {
    case "bash":
      return `# loopx completion for bash: add to ~/.bashrc:  eval "$(loopx completion bash)"
_loopx() {
  local line="\${COMP_LINE:0:COMP_POINT}"
  local cur="\${line##*[[:space:]]}"
  local IFS=$'\\n'
  local out
  out=$("\${COMP_WORDS[0]}" __complete "$line" 2>/dev/null) || return 0
  if [[ "$out" == ${FILES} ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
    return 0
  fi
  COMPREPLY=($(compgen -W "$out" -- "$cur"))
  # bash splits words at ':' (COMP_WORDBREAKS): offer only what follows the last one typed.
  if [[ "$cur" == *:* && "$COMP_WORDBREAKS" == *:* ]]; then
    local colon="\${cur%"\${cur##*:}"}" i
    for i in "\${!COMPREPLY[@]}"; do COMPREPLY[i]="\${COMPREPLY[i]#"$colon"}"; done
  fi
}
complete -F _loopx loopx
`;
    case "zsh":
      return `#compdef loopx
# loopx completion for zsh: add to ~/.zshrc (after compinit):  eval "$(loopx completion zsh)"
_loopx() {
  local -a out
  out=("\${(@f)$("\${words[1]}" __complete "\${BUFFER[1,CURSOR]}" 2>/dev/null)}")
  if [[ "\${out[1]}" == ${FILES} ]]; then
    _files
  else
    compadd -- "\${out[@]}"
  fi
}
compdef _loopx loopx
`;
    case "fish":
      return `# loopx completion for fish: loopx completion fish > ~/.config/fish/completions/loopx.fish
function __loopx_candidates
    set -l out ((commandline -opc)[1] __complete (commandline -cp) 2>/dev/null)
    if test "$out[1]" = ${FILES}
        __fish_complete_path (commandline -ct)
    else
        printf '%s\\n' $out
    end
end
complete -c loopx -f -a '(__loopx_candidates)'
`;
  }
}

/** The commands whose run id is this project's (their `latest` is too): the others steer any run. */
const PROJECT_RUN_IDS = new Set(["runs show", "runs tail"]);

/** Where the values of each kind come from (loaded only when asked); `command`: the command's path. */
async function valuesOf(kind: string, cwd: string, env: Record<string, string | undefined>, command: string[] = []): Promise<string[]> {
  switch (kind) {
    case "target": {
      const { discover } = await import("../runtime/workflow-files.js");
      const targets: string[] = [];
      for (const workflow of discover(cwd).workflows.values()) {
        if (workflow.scripts.has("index")) targets.push(workflow.name);
        for (const script of workflow.scripts.keys()) targets.push(`${workflow.name}:${script}`);
      }
      return targets;
    }
    case "run-id": {
      const { listRecordIds, recordsDir } = await import("../records/store.js");
      if (!PROJECT_RUN_IDS.has(command.join(" "))) return ["latest", ...listRecordIds(recordsDir(env))];
      const { projectRunIds } = await import("../records/project-runs.js");
      return ["latest", ...projectRunIds(recordsDir(env), cwd)];
    }
    case "run-state":
      return [...(await import("../core/run-states.js")).RUN_STATES];
    case "variable": {
      const { listGlobalEnv } = await import("../runtime/env-files.js");
      try {
        return listGlobalEnv(() => undefined).map(([name]) => name);
      } catch {
        return [];
      }
    }
    case "shell":
      return [...SHELLS];
    case "env-file":
    case "log-file":
      return [FILES];
    default:
      return [];
  }
}

/** The words typed so far (split at blanks; no quoting), and the one being completed. */
function split(line: string): { words: string[]; current: string } {
  const words = line.replace(/^\s+/, "").split(/\s+/);
  const current = words.pop() ?? "";
  return { words: words.slice(1), current }; // words[0] is the program
}

/** The candidates for the word at the end of `line`, one per line (the shell filters them), for `cwd` and `env` (the command's context). */
export async function complete(line: string, groups: CommandGroups, cwd: string, env: Record<string, string | undefined>): Promise<string> {
  const { words, current } = split(line);
  const specs = (await loadCommandGroups(groups)).flatMap((group) => group.commands.map(commandSpec));
  const lines = (values: string[]) => (values.length ? `${values.join("\n")}\n` : "");
  if (words.length === 0) return lines(current.startsWith("-") ? ["-h", "--help"] : Object.keys(groups));
  // The command: the longest command path the words start with.
  let command: CommandSpec | undefined;
  for (const candidate of specs) {
    if (candidate.path.every((part, i) => words[i] === part) && (!command || candidate.path.length > command.path.length)) command = candidate;
  }
  // `loopx env <TAB>`: a group without a command of its own offers its subcommands.
  if (!command) return lines(specs.filter((other) => other.path.length === words.length + 1 && words.every((word, i) => other.path[i] === word)).map((other) => other.path.at(-1)!));
  const rest = words.slice(command.path.length);
  let pendingKind: string | undefined;
  let positionals = 0;
  for (const word of rest) {
    const option = !command.verbatim && word.startsWith("-") ? command.options.find((candidate) => candidate.names.includes(word)) : undefined;
    if (pendingKind !== undefined) pendingKind = undefined;
    else if (option?.value) pendingKind = option.value;
    else if (!option && !(word.startsWith("-") && !command.verbatim)) positionals++;
  }
  if (pendingKind !== undefined) return lines(await valuesOf(pendingKind, cwd, env));
  if (current.startsWith("-") && !command.verbatim) return lines([...command.options.flatMap((option) => option.names), "-h", "--help"]);
  const argument = command.positionals[positionals] ?? command.positionals.find((candidate) => candidate.rest);
  const values = argument ? await valuesOf(argument.name, cwd, env, command.path) : [];
  // `loopx runs <TAB>`: the group's subcommands too.
  if (positionals === 0 && rest.length === 0) {
    for (const other of specs) {
      if (other.path.length === command.path.length + 1 && command.path.every((part, i) => other.path[i] === part)) values.push(other.path.at(-1)!);
    }
  }
  return lines(values);
}
