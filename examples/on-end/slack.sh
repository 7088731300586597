#!/bin/sh
# loopx run --on-end 'sh on-end/slack.sh' ralph — a message in a Slack channel through an incoming
# webhook (https://api.slack.com/messaging/webhooks). SLACK_WEBHOOK_URL: the webhook's URL (a
# secret: keep it in loopx's env file). Needs curl and jq.
set -eu
text="loopx run $LOOPX_END_RUN_ID ($LOOPX_END_TARGET) ended: $LOOPX_END_REASON · $LOOPX_END_ITERATIONS iterations"
jq -n --arg text "$text" '{text: $text}' |
  curl -fsS -o /dev/null -H 'Content-Type: application/json' --data-binary @- "${SLACK_WEBHOOK_URL:?set SLACK_WEBHOOK_URL}"
