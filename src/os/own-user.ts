/**
 * The one own-user check: loopx resumes, steers and keeps its sockets only in files and directories
 * of the user it runs as (another user's run record, socket or directory is refused).
 */

/** The owner's uid when `stat` belongs to another user than this process's; undefined when it is ours (or uids are unknown here). */
export function otherOwner(stat: { uid: number }): number | undefined {
  const uid = process.getuid?.();
  return uid !== undefined && stat.uid !== uid ? stat.uid : undefined;
}
