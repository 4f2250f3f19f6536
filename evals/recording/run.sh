#!/usr/bin/env bash
# Records one group of scenarios on a TPU machine into $OUT (needs a TPU; see evals/recording/README.md).
#   bash evals/recording/run.sh A|B|C        (from the repository root; $OUT must be set)
# Writes $OUT/group-GROUP.log (a header, then one delimited block per scenario) and $OUT/tpu-logs-GROUP.tar.gz
# (the glog files libtpu wrote under /tmp/tpu_logs during this group). Ends within 9 minutes whatever hangs.
set -u
GROUP="${1:-}"
case "$GROUP" in A|B|C|B19|B20|B21|B22|B23|B24|B25|B26) ;; *) echo "usage: run.sh A|B|C|B19|B20|B21|B22|B23|B24|B25|B26" >&2; exit 2 ;; esac
START=$(date +%s)
DEADLINE=$((START + 505))          # the last scenario ends by then; tar and summary follow (< 9 min in all)
[ "$GROUP" = B23 ] && DEADLINE=$((START + 280))   # B23 had about 5 device-minutes
[ "$GROUP" = B24 ] && DEADLINE=$((START + 285))   # batch 24 had 7 device-minutes in all
[ "$GROUP" = B25 ] && DEADLINE=$((START + 285))   # batch 25 had under 10 device-minutes in all
[ "$GROUP" = B26 ] && DEADLINE=$((START + 400))   # batch 26 (recorded on CPU: no device time was left), ~4 min
OUT="${OUT:-/tmp/rec-out}"
mkdir -p "$OUT"
LOG="$OUT/group-$GROUP.log"
PY=python3
export PYTHONUNBUFFERED=1 TPU_STDERR_LOG_LEVEL=0 TPU_MIN_LOG_LEVEL=0
MARK=$(mktemp /tmp/rec-mark.XXXXXX)  # /tmp/tpu_logs files newer than this belong to this group

{
  echo "##### RECORDING GROUP $GROUP #####"
  echo "# started_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# uname: $(uname -a)"
  echo "# user: uid=$(id -u)"
  echo "# python: $(command -v $PY) $($PY --version 2>&1)"
  echo "# jax jaxlib: $(timeout 60 $PY -c 'import jax, jaxlib; print(jax.__version__, jaxlib.__version__)' 2>&1 | tail -1)"
  echo "# packages:"
  timeout 60 $PY -m pip list 2>/dev/null | grep -i -E '^(jax|jaxlib|libtpu|numpy|etils|orbax|tensorstore|ml.dtypes)' | sed 's/^/#   /'
  echo "# pip show libtpu:"
  timeout 60 $PY -m pip show libtpu 2>&1 | head -8 | sed 's/^/#   /'
  echo "# group env: PYTHONUNBUFFERED=1 TPU_STDERR_LOG_LEVEL=0 TPU_MIN_LOG_LEVEL=0"
  echo "# output lines: TAG<TAB>SECONDS<TAB>TEXT, TAG O=stdout E=stderr N=recorder note"
} >> "$LOG"

if [ "$GROUP" = B ] || [ "$GROUP" = B19 ] || [ "$GROUP" = B21 ]; then
  if [ -d /tmp/ox/orbax ]; then
    echo "# orbax: already installed in /tmp/ox" >> "$LOG"
  else
    T0=$(date +%s)
    echo "# orbax install: PIP_CONFIG_FILE=/dev/null $PY -m pip install --isolated -q --only-binary=:all: --index-url file:///opt/pypi/simple --target /tmp/ox orbax-checkpoint" >> "$LOG"
    PIP_CONFIG_FILE=/dev/null timeout 150 $PY -m pip install --isolated -q --only-binary=:all: \
      --index-url file:///opt/pypi/simple --target /tmp/ox orbax-checkpoint > /tmp/rec-pip.log 2>&1
    RC=$?
    tail -15 /tmp/rec-pip.log | sed 's/^/#   /' >> "$LOG"
    echo "# orbax install exit $RC in $(( $(date +%s) - T0 ))s" >> "$LOG"
  fi
  echo "# orbax version: $(PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}/tmp/ox timeout 60 $PY -c 'import importlib.metadata as m; print(m.version("orbax-checkpoint"))' 2>&1 | tail -1)" >> "$LOG"
fi

orbax_install() {  # the machine's own index, no network; appends its outcome to the group log
  T0=$(date +%s)
  PIP_CONFIG_FILE=/dev/null timeout 150 $PY -m pip install --isolated -q --only-binary=:all: \
    --index-url file:///opt/pypi/simple --target /tmp/ox orbax-checkpoint > /tmp/rec-pip.log 2>&1
  echo "# orbax install exit $? in $(( $(date +%s) - T0 ))s (background)" >> /tmp/rec-pip.done
}

LEFT=$((DEADLINE - $(date +%s) + 20))
[ "$LEFT" -lt 30 ] && LEFT=30
if [ "$GROUP" = B23 ]; then
  # Orbax installs in the background while the scenarios that do not need it hold the chip
  rm -f /tmp/rec-pip.done
  [ -d /tmp/ox/orbax ] || { orbax_install & PIP_PID=$!; }
  FIRST="b23-hbm-dp-grad,b23-hbm-teacher,b23-compile-moe,b23-cache-unreadable-warn,b23-cache-unreadable-raise"
  timeout -s KILL "$LEFT" $PY evals/recording/record.py "$GROUP" --log "$LOG" --deadline "$DEADLINE" --only "$FIRST"
  [ -n "${PIP_PID:-}" ] && wait "$PIP_PID"
  cat /tmp/rec-pip.done >> "$LOG" 2>/dev/null
  echo "# orbax version: $(PYTHONPATH=/tmp/ox timeout 30 $PY -c 'import importlib.metadata as m; print(m.version("orbax-checkpoint"))' 2>&1 | tail -1)" >> "$LOG"
  LEFT=$((DEADLINE - $(date +%s) + 20))
  [ "$LEFT" -lt 30 ] && LEFT=30
  REST="b23-orbax-nospace,b23-user-json,b23-user-grad,b23-healthy-guard,b23-stall-lock"
  timeout -s KILL "$LEFT" $PY evals/recording/record.py "$GROUP" --log "$LOG" --deadline "$DEADLINE" --only "$REST"
else
  timeout -s KILL "$LEFT" $PY evals/recording/record.py "$GROUP" --log "$LOG" --deadline "$DEADLINE"
fi
RC=$?
echo "# record.py exit $RC at $(date -u +%Y-%m-%dT%H:%M:%SZ)" >> "$LOG"
if [ -s /tmp/rec-current.pgid ]; then
  # record.py was killed mid-scenario: end that scenario's session (our own processes) so no one keeps the chip
  PG=$(cat /tmp/rec-current.pgid)
  kill -KILL -- "-$PG" 2>/dev/null
  echo "# killed the session $PG left by record.py" >> "$LOG"
  rm -f /tmp/rec-current.pgid
fi

if [ -d /tmp/tpu_logs ]; then
  (cd /tmp && find tpu_logs -type f -newer "$MARK" -size -8M -print0 | tar --null -czf "$OUT/tpu-logs-$GROUP.tar.gz" -T -)
  SIZE=$(stat -c %s "$OUT/tpu-logs-$GROUP.tar.gz" 2>/dev/null || echo 0)
  if [ "$SIZE" -gt 15000000 ]; then
    rm -f "$OUT/tpu-logs-$GROUP.tar.gz"
    echo "# tpu_logs tarball was $SIZE bytes (over the limit): removed" >> "$LOG"
  else
    echo "# tpu_logs: $(cd /tmp && find tpu_logs -type f -newer "$MARK" | wc -l) files, tarball $SIZE bytes" >> "$LOG"
  fi
else
  echo "# /tmp/tpu_logs does not exist" >> "$LOG"
fi
rm -f "$MARK"
echo "# finished_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ) after $(( $(date +%s) - START ))s" >> "$LOG"

echo "== group $GROUP summary ($(( $(date +%s) - START ))s) =="
grep -E '^(id|exit_code|signal|timed_out|wall_s|skipped|chip_before):' "$LOG" | paste -sd' ' | sed 's/ id: /\nid: /g'
ls -l "$OUT"
exit 0
