/**
 * A download's progress line on a terminal (loopx's own addition): nothing for the first second
 * (most downloads are over by then), then one line, redrawn at most 5 times a second and cleared
 * when the download ends — bytes so far, of how many when the server said, and the rate. Never
 * off a terminal (nothing on a pipe or in a log), nor with LOOPX_PROGRESS=0 or TERM=dumb.
 */

const QUIET_MS = 1000;
const REDRAW_MS = 200;

export interface DownloadProgress {
  /** `received` bytes so far. */
  update(received: number): void;
  /** The download is over: the line, if one was drawn, is cleared. */
  done(): void;
}

const NONE: DownloadProgress = { update() {}, done() {} };

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** The progress of downloading `shown` (`total` bytes when announced), on stderr when it is a terminal. */
export function downloadProgress(shown: string, total: number | undefined, env: Record<string, string | undefined> = process.env): DownloadProgress {
  if (process.stderr.isTTY !== true || env.LOOPX_PROGRESS === "0" || env.TERM === "dumb") return NONE;
  const started = Date.now();
  let drawnAt = 0;
  let drawn = false;
  return {
    update(received) {
      const now = Date.now();
      if (now - started < QUIET_MS || now - drawnAt < REDRAW_MS) return;
      drawnAt = now;
      drawn = true;
      const of = total !== undefined && Number.isFinite(total) && total > 0 ? ` of ${megabytes(total)} (${Math.floor((received / total) * 100)}%)` : "";
      const rate = received / ((now - started) / 1000);
      process.stderr.write(`\r\x1b[Kloopx: downloading ${shown} · ${megabytes(received)}${of} · ${megabytes(rate)}/s`);
    },
    done() {
      if (drawn) process.stderr.write("\r\x1b[K");
    },
  };
}
