"""Thread safety of the native kernels (docs/reliability.md, "Threads").

Everything runs in subprocesses, so that a segfault fails the test instead of killing
pytest. ONEDNN_MAX_CPU_ISA=AVX2 makes oneDNN pick the kernels of the AVX2 reference
machine (grouped convolution on x64:gemm:jit, which needs a scratchpad) on any x86 CPU.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

REPRO = """
import threading
import numpy as np
import fw
w = fw.randn([16, 4, 3, 3])
x = fw.randn([8, 16, 8, 8])
# the primitive is created (and cached) in the main thread ...
ref = fw.nn.functional.conv2d(x, w, padding=1, groups=4).numpy()
res = {}
def run():  # ... and executed in a thread that never created one
    res["y"] = fw.nn.functional.conv2d(x, w, padding=1, groups=4).numpy()
t = threading.Thread(target=run)
t.start()
t.join()
assert np.array_equal(res["y"], ref)
def loop(i):
    for k in range(300):
        fw.nn.functional.conv2d(fw.randn([1 + (i + k) % 8, 16, 8, 8]), w, padding=1, groups=4)
ts = [threading.Thread(target=loop, args=(i,)) for i in range(2)]
[t.start() for t in ts]
[t.join() for t in ts]
print("REPRO OK")
"""


def _run(args, isa="AVX2", timeout=240):
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA=isa)
    p = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                       timeout=timeout, cwd=HERE)
    return p.returncode, p.stdout + p.stderr


@pytest.mark.parametrize("isa", ["AVX2", "ALL"])
def test_grouped_conv_primitive_runs_in_another_thread(isa):
    # issue 10: oneDNN's library scratchpad belonged to the creating thread; a cached
    # primitive run from another thread wrote through a null/short buffer (SIGSEGV)
    rc, out = _run(["-c", REPRO], isa)
    assert rc == 0 and "REPRO OK" in out, f"exit {rc}\n{out[-3000:]}"


def test_every_native_family_from_four_threads_matches_one_thread():
    rc, out = _run([str(HERE / "_reliability_stress.py"), "4", "3"])
    assert rc == 0 and "errors=0" in out, f"exit {rc}\n{out[-3000:]}"


def test_cloned_predictors_in_threads_match(tmp_path):
    pytest.importorskip("fw.inference")
    pytest.importorskip("fw.jit")
    script = f"""
import threading
import numpy as np
import fw
from fw.inference import Config, create_predictor
class Net(fw.nn.Layer):
    def __init__(self):
        super().__init__()
        self.c = fw.nn.Conv2D(16, 16, 3, padding=1, groups=4)
        self.fc = fw.nn.Linear(16 * 8 * 8, 10)
    def forward(self, x):
        return self.fc(fw.nn.functional.relu(self.c(x)).reshape([-1, 16 * 8 * 8]))
path = {str(tmp_path / "m")!r}
fw.jit.save(Net(), path, input_spec=[fw.jit.InputSpec([None, 16, 8, 8], "float32")])
base = create_predictor(Config(path))
xs = [np.random.default_rng(s).standard_normal((1 + s % 8, 16, 8, 8)).astype(np.float32)
      for s in range(8)]
want = [base.run([x])[0] for x in xs]
errors = []
def worker(i):
    p = base.clone()
    try:
        for k in range(40):
            j = (k + i) % 8
            np.testing.assert_array_equal(p.run([xs[j]])[0], want[j])
    except BaseException as e:
        errors.append(repr(e))
ts = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
print("PREDICTORS", "errors=%d" % len(errors), errors[:2])
"""
    rc, out = _run(["-c", script])
    assert rc == 0 and "errors=0" in out, f"exit {rc}\n{out[-3000:]}"
