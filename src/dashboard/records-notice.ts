import { watch, type FSWatcher } from "node:fs";
import { recordIdOf } from "../records/paths.js";

/**
 * When RecordsWatch (records-watch.ts) looks at the records directory again: fs.watch (inotify)
 * names a changed record within milliseconds, and the changes seen are batched at most every
 * BATCH_MS; stat polling is the fallback (a watch that failed or missed, a directory not made yet).
 * This decides only when to look; what is read is the hooks' concern.
 */

const BATCH_MS = 50;
const POLL_OPEN_MS = 250;
const POLL_DIR_MS = 1000;
const POLL_ENDED_MS = 2000;

/** What is done when something is noticed. */
export interface NoticeHooks {
  /** A record already followed: a change to it is read, not looked for by a scan. */
  known(id: string): boolean;
  /** Looks for records added and removed. */
  scan(): void;
  /** Reads what was appended to record `id` (if it is still followed). */
  read(id: string): void;
  /** Stat-polls the records of going runs (`ended` false) or of ended ones. */
  poll(ended: boolean): void;
  /** Recomputes the summaries and sends those that changed. */
  refresh(): void;
}

export class RecordsNotice {
  private watcher: FSWatcher | undefined;
  private timers: NodeJS.Timeout[] = [];
  private batch: NodeJS.Timeout | undefined;
  /** Records fs.watch named since the last batch. */
  private readonly dirty = new Set<string>();
  /** fs.watch named something that is no followed record: a scan is due. */
  private rescan = false;

  constructor(
    private readonly dir: string,
    private readonly hooks: NoticeHooks,
  ) {}

  start(): void {
    this.watchDir();
    const every = (ms: number, fn: () => void) => {
      const timer = setInterval(fn, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(POLL_OPEN_MS, () => this.hooks.poll(false));
    every(POLL_ENDED_MS, () => this.hooks.poll(true));
    every(POLL_DIR_MS, () => {
      if (!this.watcher) this.watchDir();
      this.hooks.scan();
      this.hooks.refresh();
    });
  }

  close(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    if (this.batch) clearTimeout(this.batch);
    this.watcher?.close();
    this.watcher = undefined;
  }

  private watchDir(): void {
    try {
      this.watcher = watch(this.dir, { persistent: false }, (_type, name) => {
        const id = typeof name === "string" ? recordIdOf(name) : undefined;
        if (id && this.hooks.known(id)) this.dirty.add(id);
        else this.rescan = true;
        this.schedule();
      });
      this.watcher.on("error", () => {
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch {
      this.watcher = undefined; // no directory yet: the directory poll retries
    }
  }

  private schedule(): void {
    if (this.batch) return;
    this.batch = setTimeout(() => {
      this.batch = undefined;
      if (this.rescan) {
        this.rescan = false;
        this.hooks.scan();
      }
      for (const id of this.dirty) this.hooks.read(id);
      this.dirty.clear();
      this.hooks.refresh();
    }, BATCH_MS);
  }
}
