#!/usr/bin/env bash
# fw's GPU checks as one prepared script, for a machine with an NVIDIA GPU, CuPy and
# (optionally, for the side-by-side rows) PyTorch: the per-op status table, the device
# tests and the side-by-side benchmark. CI machines have no GPU; this is run by hand
# (or by the device tool) from the repository root. Logs go to $OUT (./gpu-out).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT"
PY=${PY:-python3}
PYTHONPATH=$(ls -d "$ROOT"/packages/*/src | paste -sd:)
export PYTHONPATH FW_DISABLE_NATIVE=1 FW_TEST_DEVICE=gpu PYTHONUNBUFFERED=1
export PYTHONDONTWRITEBYTECODE=1
J=${JOBS:-8}
{
  nvidia-smi -L
  $PY -c "import sys, numpy, cupy; print(sys.version); print('numpy', numpy.__version__, 'cupy', cupy.__version__)"
  $PY -c "import fw; print('fw', fw.__version__, fw.device.cuda.get_device_properties())"
} > "$OUT/env.txt" 2>&1

step() { echo "== $1 $(date +%T)" >> "$OUT/steps.txt"; }

step "op status"
for i in $(seq 0 $((J - 1))); do
  timeout "${T_OPS:-45}" $PY ci/gpu/op_status.py --shard "$i/$J" --examples "${EXAMPLES:-1}" \
    > "$OUT/ops-$i.txt" 2>&1 &
done
wait
cat "$OUT"/ops-*.txt | sort > "$OUT/op_status.txt"
rm -f "$OUT"/ops-*.txt

if [ -z "${SKIP_NATIVE_STATUS:-}" ]; then  # informational: which fallback ops now run natively
step "op status without the host fallback"
for i in $(seq 0 $((J - 1))); do
  FW_NO_HOST_FALLBACK=1 timeout "${T_OPS:-45}" $PY ci/gpu/op_status.py --shard "$i/$J" \
    --examples "${EXAMPLES:-1}" --only "$($PY -c 'from fw.core.kernels.host_fallback import HOST_FALLBACK as H; print(",".join(sorted(H)))')" \
    > "$OUT/ops-$i.txt" 2>&1 &
done
wait
cat "$OUT"/ops-*.txt | sort > "$OUT/op_native.txt"
rm -f "$OUT"/ops-*.txt
fi

step "device tests"
# [gpuk] test_gpu_kernels.py: the RawKernels (conv, pool, softmax, norm) against the
# reference, every dtype
timeout "${T_TESTS:-100}" $PY -m pytest -q --tb=short -W ignore::Warning -n "$J" --timeout 90 \
  tests/test_device_training.py packages/fw-core/tests/test_devices.py \
  packages/fw-core/tests/test_device_ops.py packages/fw-autograd/tests/test_device_grads.py \
  packages/fw-core/tests/test_gpu_kernels.py \
  > "$OUT/tests.log" 2>&1
echo "exit $?" >> "$OUT/tests.log"

step "side by side"
timeout "${T_BENCH:-100}" $PY asv_bench/gpu_side_by_side.py --json "$OUT/bench.json" \
  > "$OUT/bench.log" 2>&1
echo "exit $?" >> "$OUT/bench.log"
# ---- gpurt (issue 17 runtime: generated elementwise kernels, CUDA graphs, NCCL) ----
step "gpurt tests"
timeout "${T_RT:-60}" $PY -m pytest -q --tb=short -W ignore::Warning -n "$J" --timeout 50 \
  packages/fw-core/tests/test_gpu_runtime.py packages/fw-distributed/tests/test_collectives_nccl.py \
  > "$OUT/gpurt_tests.log" 2>&1
echo "exit $?" >> "$OUT/gpurt_tests.log"
step "gpurt step overhead"
{  # the MLP step with tiny sizes: fw's own cost per kernel call, eager and graphed
  timeout 30 $PY ci/gpu/step_overhead.py --device gpu --steps 50 2>&1 | grep "us/op" | head -1
  FW_GPU_GRAPHS=1 timeout 30 $PY ci/gpu/step_overhead.py --device gpu --steps 50 --static 2>&1 \
    | grep "us/op" | head -1 | sed 's/^/graphs: /'
} > "$OUT/gpurt_overhead.txt" 2>&1
# ---- end gpurt ----
step "done"

# ---- [gpuk] a short table, last: the test outcome, the failures, and each benchmark row
{
  echo "== tests: $(grep -E '(passed|failed|error)' "$OUT/tests.log" | tail -1)"
  grep -E '^(FAILED|ERROR) ' "$OUT/tests.log" | cut -c1-160 | head -40
  $PY - "$OUT/bench.json" <<'PYEOF'
import json, sys
try:
    rows = json.load(open(sys.argv[1]))["rows"]
except Exception as e:
    print("== bench: no bench.json", e)
    sys.exit(0)
def cell(v):
    return f"{v:.3g}" if isinstance(v, (int, float)) else str(v)[:60]
for label, r in rows.items():
    subs = r.items() if all(isinstance(v, dict) for v in r.values()) else [(label, r)]
    for lab, row in subs:
        print(f"{lab[:48]:48s} " + "  ".join(f"{k}={cell(v)}" for k, v in row.items()
                                             if not k.startswith("losses")))
PYEOF
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
# ---- [gpuk] end
