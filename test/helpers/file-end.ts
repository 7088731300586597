/**
 * What a test file leaves to undo once its last test has run: temp directories, tmpfs mounts.
 * Helpers register the undoing here as they make things; test/setup/file-end.ts runs it after every
 * test file. The end-to-end tests share a worker process between files (vitest.config.ts, isolate
 * off), so a helper module is imported once per worker, not once per file: a hook it registered at
 * import would belong to the first file only.
 */
const undo: Array<() => void> = [];

/** `step` runs after the current test file's last test; later registrations run first. */
export function atFileEnd(step: () => void): void {
  undo.push(step);
}

/** Runs (and forgets) what the file registered, newest first; a step that throws does not stop the rest. */
export function runFileEnd(): void {
  for (let step = undo.pop(); step; step = undo.pop()) {
    try {
      step();
    } catch {
      // A directory a test made unremovable on purpose, a mount already gone: nothing more to do.
    }
  }
}
