#!/bin/bash
# Reviews the finished task and ticks it off. It prints no goto, so the loop resets to its
# starting target (worker:index) with empty stdin.
set -euo pipefail
task=$(cat)
tasks="$LOOPX_PROJECT_ROOT/tasks.md"
grep -qF -- "did: $task" "$LOOPX_PROJECT_ROOT/work.log" || { echo "review: no work logged for '$task'" >&2; exit 1; }
tmp="$tasks.tmp"
awk -v t="- [ ] $task" '$0 == t { sub(/\[ \]/, "[x]") } { print }' "$tasks" > "$tmp" && mv "$tmp" "$tasks"
echo "review: checked off \"$task\"" >&2
