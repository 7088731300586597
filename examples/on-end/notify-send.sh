#!/bin/sh
# loopx run --on-end 'sh on-end/notify-send.sh' ralph — a desktop notification (Linux, libnotify).
# A run that did not end well (non-zero exit code) is critical: it stays until dismissed.
set -eu
urgency=normal
[ "$LOOPX_END_EXIT_CODE" = 0 ] || urgency=critical
notify-send -u "$urgency" -a loopx "loopx: $LOOPX_END_TARGET $LOOPX_END_STATE" \
  "$LOOPX_END_REASON · $LOOPX_END_ITERATIONS iterations · run $LOOPX_END_RUN_ID"
