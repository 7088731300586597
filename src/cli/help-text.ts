/** Static help texts (spec §11): no imports, so printing help loads nothing else. */

export const TOP_LEVEL_HELP = `loopx — run loops of scripts with structured output, goto and stop

Usage:
  loopx <command> [options]
  loopx -h | --help

Commands:
  run [options] <workflow>[:<script>]   Run a workflow's script in a loop
  version                               Print the loopx version
  output [--result <v>] [--goto <t>] [--stop]
                                        Print structured output (for bash scripts)
  env set <name> <value>                Set a global environment variable
  env remove <name>                     Remove a global environment variable
  env list                              List global environment variables
  install [options] <source>            Install workflows from git or a tarball
  init [<workflow>] [--ts]              Create .loopx/<workflow>/ (default: main) with a working
                                        index script (loopx's own addition)
  runs [show <id> | tail [<id>]] [--json]
                                        Recent runs, one run's iterations, or follow a run
                                        (loopx's own addition; see 'loopx runs -h')

Start a project: 'loopx init', then 'loopx run main'.
Run 'loopx run -h' to list the workflows in .loopx/, 'loopx install -h' for sources.
`;

export const INSTALL_HELP = `Usage: loopx install [options] <source>

Installs workflows into .loopx/ (created if missing).

Sources:
  org/repo                              GitHub shorthand: https://github.com/org/repo.git
  https://github.com/org/repo[.git]     git (also gitlab.com, bitbucket.org)
  <any URL ending in .git>              git, cloned with --depth 1
  <URL whose path ends in .tar.gz/.tgz> tarball, downloaded and extracted

A source whose top level holds script files is one workflow, named after the repository or
archive; otherwise each top-level directory holding script files is a workflow of its own.

Options:
  -w, --workflow <name>   Install only this workflow from a multi-workflow source
  -y                      Replace an existing workflow / ignore a loopx version mismatch
  -h, --help              Show this help
`;

export const COMMAND_USAGE: Record<string, string> = {
  version: "Usage: loopx version\n\nPrints the loopx version.\n",
  output:
    "Usage: loopx output [--result <value>] [--goto <target>] [--stop]\n\nPrints structured output JSON for the loop to read; at least one flag is required.\n",
  runs: `Usage:
  loopx runs [--json]              Recent runs, newest first: id, state, start, duration,
                                   iterations, target, project
  loopx runs show <id> [--json]    One run's iterations (a unique prefix of the id is enough)
  loopx runs tail [<id>] [--json]  Follow a run until it ends (default: this project's latest run)

loopx's own addition. Every 'loopx run' writes a record of its events, one JSON object per line,
to $XDG_STATE_HOME/loopx/runs/<LOOPX_RUN_ID>.jsonl (default ~/.local/state/loopx/runs/); the
newest 200 are kept. LOOPX_RECORD=0 turns records off. States: running, stopped, limit, failed,
interrupted, timed-out, or crashed (its process is gone without a run.end).
`,
  init: `Usage: loopx init [<workflow>] [--ts]

Creates .loopx/<workflow>/ (default workflow name: main) holding a working index script: index.sh
(bash), or index.ts (TypeScript, using output() and input() from "loopx") with --ts. Creates .loopx/
if needed; never overwrites anything. Then: loopx run <workflow>. loopx's own addition.
`,
  env: "Usage:\n  loopx env set <name> <value>\n  loopx env remove <name>\n  loopx env list\n\nManages global variables in $XDG_CONFIG_HOME/loopx/env (default ~/.config/loopx/env).\n",
};

export const RUN_USAGE = `Usage: loopx run [options] <workflow>[:<script>]

Runs <workflow>:<script> (default script: index) in a loop: each script's stdout is read as
{"result", "goto", "stop"}; goto moves to another script, no goto restarts from the target,
stop ends the loop.

Options:
  -n <count>   Stop after <count> script executions (goto hops count); 0 only validates
  -e <path>    Env file merged over the global env ($XDG_CONFIG_HOME/loopx/env)
  --log <file> Append the run's events (JSON lines) to <file> too (loopx's own addition)
  --timeout <duration>
               Limit for each script execution (loopx's own addition)
  --max-time <duration>
               Limit for the whole run; no script starts after it (loopx's own addition)
  --summary    Print the summary line when the run ends, also off a terminal (loopx's own
               addition)
  -h, --help   Show this help

Durations: seconds (90, 1.5) or with units, largest first: 500ms, 30s, 20m, 2h, 1h30m. When a
limit expires the running script's process group gets SIGTERM, then SIGKILL 5 s later, loopx
prints one line naming the script and the limit, and exits 124 (as timeout(1) does).

Scripts get LOOPX_BIN, LOOPX_PROJECT_ROOT and LOOPX_WORKFLOW, and (loopx's own additions)
LOOPX_TMPDIR (the run's private scratch directory, removed when the run ends), LOOPX_RUN_ID
(the run's id) and LOOPX_ITERATION (this script execution's number, counted as -n counts).

loopx's own additions: when stderr is a terminal, a progress line before each script and a
summary when the run ends, which for a failed run is the one line saying why (LOOPX_PROGRESS=0
turns them off, LOOPX_PROGRESS=1 on anywhere; NO_COLOR or TERM=dumb: no styling).
Each run's events are recorded in $XDG_STATE_HOME/loopx/runs/ (LOOPX_RECORD=0: off); see
'loopx runs -h'.

No strays (loopx's own addition): processes that left the script's process group (setsid,
detached children, daemons) but still carry the run's LOOPX_RUN_ID are ended (SIGTERM, the
remaining grace, SIGKILL) when the run is interrupted, times out or fails; after a normal end
(stop, -n reached) they keep running and loopx prints one warning naming them. A daemon meant to
outlive the run drops the variable: env -u LOOPX_RUN_ID my-daemon ...
`;

