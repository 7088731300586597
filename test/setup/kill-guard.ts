// Loaded before every test file (vitest.config.ts setupFiles): a test can never signal its own
// process group. kill(2) takes pid 0 (and -0) for the caller's group and -1 for every process the
// user may signal, so a pid read from a file before the script wrote it (Number("") is 0) would
// SIGKILL vitest and the CI script around it — a run that ends mid-suite with no summary line.
// Refused here with an error naming the pid, the test fails where the bad pid came from instead.
import { procStatFields } from "../helpers/survivors.js";

const GUARDED = Symbol.for("loopx.test.kill-guard");
const host = process as typeof process & { [GUARDED]?: true };
if (!host[GUARDED]) {
  host[GUARDED] = true;
  // This worker's process group (Linux only).
  const ownGroup = process.platform === "linux" ? Number(procStatFields("self")[2]) : undefined;
  const kill = process.kill.bind(process);
  process.kill = (pid: number, signal?: string | number): true => {
    if (!Number.isSafeInteger(pid) || Math.abs(pid) <= 1 || (ownGroup !== undefined && -pid === ownGroup)) {
      throw new Error(`test refused to signal pid ${pid}: not one of its own processes (a pid file read before it was written?)`);
    }
    return kill(pid, signal);
  };
}
