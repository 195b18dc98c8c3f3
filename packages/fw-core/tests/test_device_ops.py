"""Every op of the table on the test device (`fw.core.testing.device`): the record
samples are moved there, the op runs through the eager dispatcher (the device's own
kernel, or the NumPy reference on the device's arrays through NumPy's dispatch
protocols), and each output must stay on that device and equal the cpu reference.

Without a GPU the device is the 'fake' one (a NumPy subclass), which catches kernels
that build host arrays; ``FW_TEST_DEVICE=gpu`` runs the same tests on CuPy."""

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import fw
from fw.core.dispatch import invoke
from fw.core.ops import OPS
from fw.core.testing import assert_close, load_all, reference_call, tolerance
from fw.core.testing import device as _dev

RECORDS = load_all()
DEVICE = _dev.name()
# control flow is tested by its own tests (nested blocks)
EXEMPT = {"cond", "while"}
# ops whose kernels are host code by nature, with why (each one is a documented
# device-to-host boundary, not a silent fallback)
HOST_ONLY: dict = {}
CASES = [pytest.param(r, id=f"{name}-{i}") for name, recs in sorted(RECORDS.items())
         if name in OPS and name not in EXEMPT and name not in HOST_ONLY
         for i, r in enumerate(recs)]


@pytest.mark.parametrize("rec", CASES)
@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.generate])  # no shrinking: the draw is printed
@given(data=st.data())
def test_op_on_device_matches_cpu_reference(rec, data):
    op = OPS[rec.op]
    p = _dev.place()
    dtype = data.draw(st.sampled_from(rec.dtypes), label="dtype")
    s = rec.sample(data.draw, dtype)
    fw.seed(0)
    want, _ = reference_call(op, s.args, dict(s.attrs))
    args = _dev.move(s.args, p)
    fw.seed(0)
    with _dev.on(p):
        got = invoke(op, args, dict(s.attrs))
    _dev.check_outputs(rec, dtype, s.attrs, got, want, p)


GPU_KERNEL_OPS = ["matmul", "where", "tril", "triu", "heaviside"]


@pytest.mark.skipif(DEVICE == "gpu", reason="on a GPU the test above runs these kernels")
@pytest.mark.parametrize("name", GPU_KERNEL_OPS)
@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])
@given(data=st.data())
def test_gpu_kernels_match_the_reference_on_the_fake_device(name, data):
    """fw.core.kernels.gpu's kernels are written against CuPy's module; handed the fake
    device's NumPy-like module instead, they run here and must give the reference's
    values and dtypes (their CuPy specifics run on a GPU, ci/gpu/run.sh)."""
    from fw.core.kernels.gpu import dtypes, linalg
    from fw.core.testing.fake_device import FakeBackend

    kernels = {**linalg.kernels(FakeBackend.xp), **dtypes.kernels(FakeBackend.xp)}
    assert sorted(kernels) == sorted(GPU_KERNEL_OPS)
    op = OPS[name]
    p = _dev.place()
    rec = data.draw(st.sampled_from(RECORDS[name]))
    dtype = data.draw(st.sampled_from(rec.dtypes))
    s = rec.sample(data.draw, dtype)
    want, attrs = reference_call(op, s.args, dict(s.attrs))
    args = [a._data if isinstance(a, fw.Tensor) else a for a in _dev.move(s.args, p)]
    if name == "where":  # the dispatcher promotes x and y before the kernel
        wd = np.asarray(want).dtype
        args[1:] = [a.astype(wd) if hasattr(a, "astype") else wd.type(a) for a in args[1:]]
    got = kernels[name](*args, **attrs)
    assert got.dtype == np.asarray(want).dtype
    r, a = rec.tol.get(dtype.name, tolerance(dtype))
    assert_close(np.asarray(got), want, dtype, r, a, what=f"{name} gpu kernel")
