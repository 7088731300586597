/** The run's options as given at its start, kept so that `loopx runs resume` runs it the same way. */
export interface RecordedOptions {
  /** Absolute path of the `-e` / envFile file. */
  envFile?: string;
  /** `--timeout` in ms. */
  timeout?: number;
  /** `--max-time` in ms. */
  maxTime?: number;
  /** Absolute path of the `--log` file. */
  log?: string;
  /** `--on-end` / RunOptions.onEnd: the command run once when the run ends (src/hooks). */
  onEnd?: string;
  /** `--max-cost` in USD, `--count-estimates`, `--max-tokens` (core/budget.ts). */
  maxCost?: number;
  countEstimates?: boolean;
  maxTokens?: number;
  /** `--sandbox` ("on", or "off" given again on a resume) and its `--sandbox-allow` rules (src/sandbox). */
  sandbox?: "on" | "off";
  sandboxAllow?: string[];
  /** `--stall-after`: iterations in a row without progress that end the run "stalled" (core/stall.ts). */
  stallAfter?: number;
}
