#!/bin/sh
# A search program for goldeneval.command in POSIX shell: answers every question with the ids
# in SEARCH_IDS (a JSON list's items, e.g. '"fares/day-ticket", "fares/fare-table-2026"'), until
# standard input closes.  For the tests:
#   SEARCH_PIDS=FILE       append this process's id to FILE (and that of any child it starts)
#   SEARCH_WAIT_FOR=N      before the first answer, wait until FILE lists N processes
#   SEARCH_FAULT=KIND      misbehave at the SEARCH_FAULT_AT-th question, once: unless the file
#   SEARCH_FAULT_AT=N      SEARCH_FAULT_MARKER exists, which it then creates (so that the
#   SEARCH_FAULT_MARKER=F  program started after the fault behaves).  KIND: exit, kill, hang,
#                          garbage, wrong-id, error, numbers, stderr
[ -n "$SEARCH_PIDS" ] && echo $$ >> "$SEARCH_PIDS"
asked=0
while IFS= read -r line; do
  asked=$((asked + 1))
  id=${line#'{"id": '}
  id=${id%%,*}
  if [ -n "$SEARCH_WAIT_FOR" ]; then
    while [ "$(wc -l < "$SEARCH_PIDS")" -lt "$SEARCH_WAIT_FOR" ]; do sleep 0.02; done
  fi
  if [ "$asked" = "${SEARCH_FAULT_AT:-0}" ] && [ ! -e "$SEARCH_FAULT_MARKER" ]; then
    : > "$SEARCH_FAULT_MARKER"
    case $SEARCH_FAULT in
      exit) exit 3 ;;
      kill) kill -9 $$ ;;
      hang) sleep 1000 & echo $! >> "$SEARCH_PIDS"; wait ;;
      garbage) echo "Searching for: $line"; continue ;;
      wrong-id) printf '{"id": %s, "ids": []}\n' "$((id + 100))"; continue ;;
      error) printf '{"id": %s, "error": "the index is not loaded"}\n' "$id"; continue ;;
      numbers) printf '{"id": %s, "ids": ["a", 2]}\n' "$id"; continue ;;
      stderr) echo "answer.sh: question $id" >&2 ;;
    esac
  fi
  printf '{"id": %s, "ids": [%s]}\n' "$id" "$SEARCH_IDS"
done
