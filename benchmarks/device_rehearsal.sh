#!/usr/bin/env bash
# CI's rehearsal of the GPU check: the device command
# (benchmarks/device_run.sh) run as the GPU machine would run it, on the CPU:
#
#   bash benchmarks/device_rehearsal.sh [--venv DIR] [--shared DIR]
#
# 1. a separate virtual environment of the device image's packages that the
#    check imports (benchmarks/device_image.txt; this machine's Python and
#    torch's CPU build stand in), without rdkit, ogb, chemprop or the
#    project; --venv DIR reuses (or builds once) one there;
# 2. a fresh folder holding only what travels: the files git does not
#    ignore (tracked or not), and the carried .whl/ and .device-data/ that
#    benchmarks/gpu_bundle.py fills for this Python; no ../shared;
# 3. the very device script with `--device cpu --tiny --workers 2`: it
#    installs the wheels as on the machine, then every step must pass.
# Exits non-zero if any step fails; prints its wall time.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
VENV=
SHARED=$REPO/../shared/data
while [ $# -gt 0 ]; do
    case $1 in
        --venv) VENV=$2; shift 2 ;;
        --shared) SHARED=$2; shift 2 ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
VENV=${VENV:-$WORK/venv}
start=$SECONDS

if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --no-compile --upgrade pip
    "$VENV/bin/python" -m pip install -q --no-compile \
        -r "$REPO/benchmarks/device_image.txt"
fi
for absent in rdkit ogb chemprop graphormer_sepnorm; do
    if (cd / && env -u PYTHONPATH "$VENV/bin/python" -c "import $absent" \
            2>/dev/null); then
        echo "rehearsal: $absent is in $VENV; the device has none" >&2
        exit 1
    fi
done
echo "rehearsal: environment ready after $((SECONDS - start)) s"

FRESH=$WORK/tree
mkdir "$FRESH"
(cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
    tar --null -T - -cf - 2>/dev/null) | tar -xf - -C "$FRESH"
PY_VERSION=$("$VENV/bin/python" -c \
    'import sys; print("%d.%d" % sys.version_info[:2])')
"$VENV/bin/python" "$REPO/benchmarks/gpu_bundle.py" --python-version \
    "$PY_VERSION" --into "$FRESH" --shared "$SHARED"
echo "rehearsal: tree and carried folders ready after $((SECONDS - start)) s"

mkdir "$WORK/out"
status=0
(cd "$FRESH" && env -u PYTHONPATH -u GRAPHORMER_SHARED_DATA \
    -u GRAPHORMER_DATA_ROOT PATH="$VENV/bin:$PATH" OUT="$WORK/out" \
    DEVICE_SITE="$WORK/site" bash benchmarks/device_run.sh --device cpu \
    --tiny --workers 2) || status=$?
"$VENV/bin/python" - "$WORK/out" <<'PY' || status=1
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
files = sorted(p.name for p in out.iterdir())
print(f'rehearsal: {len(files)} files back: {", ".join(files)}')
report = json.loads((out / 'gpu_check.json').read_text())
for name, runs in report['steps'].items():
    for run in runs:
        print(f"  {name:10s} {run['status']} in {run['seconds']} s "
              f"(limit {run['limit_s']} s)")
        if run['status'] != 'ok':
            print(run['output_tail'][-2000:])
expected = {'env.txt', 'tests_gpu.txt', 'reference.md', 'train_results.json',
            'train_metrics.csv', 'throughput.json', 'pipelines.json',
            'gpu_check.json'}
sys.exit(0 if set(files) == expected and len(files) <= 8 else
         f'rehearsal: expected the files {sorted(expected)}')
PY
echo "rehearsal: exit $status after $((SECONDS - start)) s"
exit $status
