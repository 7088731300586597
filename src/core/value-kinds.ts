/**
 * What a value is, by meaning: its placeholder in the help, and (for the shell completion) what
 * may be offered for it. Options and arguments get theirs where they are declared: cli/declare.ts
 * (`valueOption("--limit", "count")`, `positional("run-id")`) or the run options table (engine/options.ts).
 */
export const VALUE_KINDS = {
  count: "<count>", // a non-negative integer
  usd: "<usd>", // an amount of US dollars: 5, 0.50
  "env-file": "<path>", // an existing .env file
  "log-file": "<file>", // a file appended to
  duration: "<duration>", // 90, 1.5, 500ms, 1h30m
  workflow: "<name>", // a workflow's name
  "new-workflow": "<name>", // a name for a workflow not yet in .loopx/ (`loopx init`)
  variable: "<name>", // an environment variable's name
  text: "<value>", // anything
  note: "<text>", // one line for a run record
  goto: "<target>", // a goto target, not validated
  target: "<workflow>[:<script>]", // what `loopx run` runs
  source: "<source>", // what `loopx install` installs
  "run-id": "<id>", // a run record's id or a unique prefix of it, or `latest`
  shell: "<shell>", // bash, zsh or fish (`loopx completion`)
  "run-state": "<state>", // how a run ended: stopped, limit, failed, ... (`loopx runs --state`)
  port: "<port>", // a TCP port, 0 to 65535
  address: "<address>", // an address of this machine to listen on
  command: "<command>", // a shell command (`sh -c`), e.g. `loopx run --on-end`
  "worktree-name": "<name>", // a name for a run's worktree (`loopx run --worktree=<name>`)
  path: "<path>", // a file or directory
  "sandbox-mode": "<on|off>", // `loopx run --sandbox[=on|off]`
  "sandbox-rule": "<host:port|path>", // what `--sandbox-allow` adds to the policy
} as const;
export type ValueKind = keyof typeof VALUE_KINDS;

