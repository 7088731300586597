#!/bin/bash
# Entry point of the loop: pick the next open task, or stop when none is left.
# Human-readable progress goes to stderr; stdout is reserved for structured output.
# LOOPX_ITERATION counts script executions in this run, goto hops included (as -n counts them).
set -euo pipefail
tasks="$LOOPX_PROJECT_ROOT/tasks.md"
next=$(grep -m1 -- '- \[ \] ' "$tasks" | sed 's/^- \[ \] //' || true)
if [ -z "$next" ]; then
  echo "worker: [iteration $LOOPX_ITERATION] no open tasks left — stopping" >&2
  "$LOOPX_BIN" output --result "all tasks done" --stop
  exit 0
fi
echo "worker: [iteration $LOOPX_ITERATION] next task: $next" >&2
# Bare goto: another script in this same workflow (worker:do-task); the task is piped to its stdin.
"$LOOPX_BIN" output --result "$next" --goto do-task
