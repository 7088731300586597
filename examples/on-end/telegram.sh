#!/bin/sh
# loopx run --on-end 'sh on-end/telegram.sh' ralph — a Telegram message from your bot (Bot API
# sendMessage). TELEGRAM_BOT_TOKEN: from @BotFather (a secret: keep it in loopx's env file);
# TELEGRAM_CHAT_ID: your chat with the bot. Needs curl and jq.
set -eu
text="loopx run $LOOPX_END_RUN_ID ($LOOPX_END_TARGET) ended: $LOOPX_END_REASON · $LOOPX_END_ITERATIONS iterations"
jq -n --arg chat "${TELEGRAM_CHAT_ID:?set TELEGRAM_CHAT_ID}" --arg text "$text" '{chat_id: $chat, text: $text}' |
  curl -fsS -o /dev/null -H 'Content-Type: application/json' --data-binary @- \
    "${TELEGRAM_API:-https://api.telegram.org}/bot${TELEGRAM_BOT_TOKEN:?set TELEGRAM_BOT_TOKEN}/sendMessage"
