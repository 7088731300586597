/** The `--sandbox` facts of a run's events (loopx's own addition; src/sandbox/). Types only. */

/** The fence of a `--sandbox` run (src/sandbox/): what set it up, and a digest of its effective policy. */
export interface SandboxInfo {
  kind: "bwrap";
  /** The fence's own version (bubblewrap's), when it says. */
  version?: string;
  /** sha256 of the effective policy, 16 hex digits (`loopx sandbox show` prints the policy and its digest). */
  policyDigest: string;
}

/**
 * Something the fence refused a script (loopx's own addition): a connection to a host and port
 * the policy does not allow, reported by the fence's proxy as it refused it.
 */
export interface SandboxDeniedEvent {
  v: 1;
  time: string;
  run: string;
  type: "sandbox.denied";
  kind: "connect";
  /** host:port. */
  target: string;
  /** The iteration and the script running then, if one was. */
  n?: number;
  script?: string;
}
