#!/bin/sh
# loopx run --on-end 'sh on-end/mail.sh' ralph — a mail through the local sendmail (postfix, exim,
# msmtp, ...). MAIL_TO: the address. The body ends with the run's outcome as JSON (loopx's stdin).
set -eu
{
  printf 'To: %s\nSubject: loopx: %s %s\n\n' "${MAIL_TO:?set MAIL_TO}" "$LOOPX_END_TARGET" "$LOOPX_END_STATE"
  printf '%s · %s iterations · run %s\n\n' "$LOOPX_END_REASON" "$LOOPX_END_ITERATIONS" "$LOOPX_END_RUN_ID"
  cat
} | sendmail -t
