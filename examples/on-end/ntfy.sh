#!/bin/sh
# loopx run --on-end 'sh on-end/ntfy.sh' ralph — a push to your phone through ntfy (https://ntfy.sh).
# NTFY_TOPIC: your topic (anyone who knows it can read it: pick a long random one);
# NTFY_URL: your own server instead of https://ntfy.sh. Put both in loopx's env file.
set -eu
priority=default
[ "$LOOPX_END_EXIT_CODE" = 0 ] || priority=high
curl -fsS -o /dev/null \
  -H "Title: loopx: $LOOPX_END_TARGET $LOOPX_END_STATE" -H "Priority: $priority" -H "Tags: loopx" \
  -d "$LOOPX_END_REASON · $LOOPX_END_ITERATIONS iterations · run $LOOPX_END_RUN_ID" \
  "${NTFY_URL:-https://ntfy.sh}/${NTFY_TOPIC:?set NTFY_TOPIC}"
