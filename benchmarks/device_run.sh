#!/usr/bin/env bash
# The device command of the GPU check: run from the repository's root on the
# lent GPU machine, with .whl and .device-data carried (python
# benchmarks/gpu_bundle.py fills them):
#
#   bash benchmarks/device_run.sh
#
# It installs the carried wheels as the device README says (.whl/*.whl on
# every step's PYTHONPATH; the reference's .whl/reference/*.whl on a path of
# its own, which gpu_check.py puts first for its speed step alone), then runs
# benchmarks/gpu_check.py into $OUT with what is left of its budget.
# Its arguments go to gpu_check.py: CI's rehearsal
# (benchmarks/device_rehearsal.sh) runs this very script with
# `--device cpu --tiny --workers 2`. DEVICE_SITE (default /tmp/site) is where
# the wheels go, $DEVICE_SITE-reference the reference's.
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?OUT must name the output folder (the device tool sets it)}"
SITE=${DEVICE_SITE:-/tmp/site}
PY=${DEVICE_PYTHON:-python3}
install() {  # install TARGET WHEEL...
    local target=$1
    shift
    "$PY" -m pip install -q --no-index --no-deps --no-compile \
        --no-cache-dir --upgrade --target "$target" "$@"
}
install "$SITE" .whl/*.whl || exit 1
install "$SITE-reference" .whl/reference/*.whl || exit 1
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
export GRAPHORMER_REFERENCE_PATH=$SITE-reference
# The wheels' install counts against the budget (SECONDS: since the start).
exec "$PY" benchmarks/gpu_check.py --out "$OUT" --data .device-data \
    --spent-seconds "$SECONDS" "$@"
