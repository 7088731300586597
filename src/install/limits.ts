/**
 * Limits on tarball installs (README "Install limits"): what a server may send and what an archive
 * may expand to. Fixed, deliberately: no environment variable or flag changes them.
 */

/** The most a download may be, and the most an archive may expand to (its uncompressed tar stream). */
export const MAX_ARCHIVE_BYTES = 1024 * 1024 * 1024;
/** The most entries (files, directories, links) an archive may hold. */
export const MAX_ARCHIVE_ENTRIES = 200_000;

const LIMIT = "the limit for workflow archives";
export const TOO_LARGE_DOWNLOAD = `the archive is larger than 1 GiB (${LIMIT})`;
export const TOO_LARGE_EXPANDED = `the archive expands past 1 GiB (${LIMIT})`;
export const TOO_MANY_ENTRIES = `the archive has more than 200,000 entries (${LIMIT})`;
