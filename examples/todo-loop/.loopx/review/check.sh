#!/bin/bash
# Reviews the finished task and ticks it off. It prints no goto, so the loop resets to its
# starting target (worker:index) with empty stdin.
set -euo pipefail
task=$(cat)
tasks="$LOOPX_PROJECT_ROOT/tasks.md"
# The worker's log is a hand-off file in this run's scratch directory ($LOOPX_TMPDIR).
grep -qF -- "did: $task" "$LOOPX_TMPDIR/work.log" || { echo "review: no work logged for '$task'" >&2; exit 1; }
tmp="$LOOPX_TMPDIR/tasks.md.next"
awk -v t="- [ ] $task" '$0 == t { sub(/\[ \]/, "[x]") } { print }' "$tasks" > "$tmp" && cat "$tmp" > "$tasks"
echo "review: [iteration $LOOPX_ITERATION] checked off \"$task\"" >&2
