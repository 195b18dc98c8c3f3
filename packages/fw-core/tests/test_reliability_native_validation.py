"""The native layer validates its own inputs (docs/reliability.md, "Native input
validation"): fw.core._C is reachable, so its entry points get extreme geometry from a
hypothesis loop in a subprocess (a signal fails the test) and must answer with a Python
exception, never a crash."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from fw.core import _native

pytestmark = pytest.mark.skipif(not _native.available, reason="no native extension")

LOOP = r"""
import numpy as np
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st
from fw.core import _native
C = _native.C
huge = st.sampled_from([-2**63, -2**62, -1, 0, 1, 2, 3, 2**31, 2**62, 2**63 - 1])
small = st.integers(-2, 5)
geo = st.one_of(huge, small)
calls = [0]

@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(k=st.lists(geo, min_size=2, max_size=2), s=st.lists(geo, min_size=2, max_size=2),
       pb=st.lists(geo, min_size=2, max_size=2), pe=st.lists(geo, min_size=2, max_size=2),
       d=st.lists(geo, min_size=2, max_size=2), g=geo, oh=st.integers(0, 6),
       which=st.integers(0, 5))
def loop(k, s, pb, pe, d, g, oh, which):
    x = np.ones((1, 4, 4, 4), np.float32)
    y = np.zeros((1, 4, oh, oh), np.float32)
    w = np.ones((4, 4, 3, 3), np.float32)
    calls[0] += 1
    try:
        if which == 0:
            C.max_pool_forward(x, y, None, k, s, pb, pe, False)
        elif which == 1:
            C.avg_pool_forward(x, y, k, s, pb, pe, True, 0.0, False)
        elif which == 2:
            C.avg_pool_backward(y, x.copy(), k, s, pb, pe, True, 0.0, False)
        elif which == 3:
            C.conv_forward(x, w, y, None, None, "none", s, d, pb, pe, g, False)
        elif which == 4:
            C.conv_backward_data(y, w, x.copy(), s, d, pb, pe, g, False)
        else:
            C.conv_backward_weights(x, y, w.copy(), None, s, d, pb, pe, g, False)
    except (ValueError, TypeError, OverflowError, RuntimeError):
        pass

loop()
print("CALLS", calls[0])
"""


def test_native_entry_points_survive_extreme_geometry():
    p = subprocess.run([sys.executable, "-c", LOOP], capture_output=True, text=True,
                       timeout=240, env=dict(os.environ))
    assert p.returncode == 0 and "CALLS" in p.stdout, f"exit {p.returncode}\n{p.stderr[-3000:]}"


@pytest.mark.parametrize("pads", [([2**62, 2**62], [2**62, 2**62]), ([3, 0], [0, 0])])
def test_pool_rejects_absurd_or_oversized_padding(pads):
    # 2**62 paddings overflowed int64 in the output-size check (then read far outside x)
    x = np.ones((1, 1, 4, 4), np.float32)
    y = np.zeros((1, 1, 4, 4), np.float32)
    with pytest.raises(ValueError, match="max_pool"):
        _native.C.max_pool_forward(x, y, None, [2, 2], [1, 1], *pads, False)



# Every other entry point of fw.core._C (issue 10's audit): one hypothesis loop in a
# subprocess draws, per call, arrays that are mostly consistent with each other but each
# may get another shape (mismatched sizes, zero-size dims), another dtype (float64, int32,
# float16, bool), a non-contiguous layout, or be another operand of the same call
# (aliasing), and integer arguments (axes, rules, opcodes, kinds, row lengths, thread
# counts, capacities, enum values) from the extreme set; the process must end normally.
ALL_LOOP = r"""
import numpy as np
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st
from fw.core import _native

C = _native.C
huge = st.sampled_from(
    [-(2**63), -(2**62), -(2**31), -1, 0, 1, 2, 3, 2**31 - 1, 2**31, 2**62, 2**63 - 1]
)
geo = st.one_of(huge, st.integers(-2, 5))
DTYPES = [np.float32, np.uint16, np.float16, np.float64, np.int32, np.bool_]
FILL = {np.uint16: 0x3F00, np.int32: 1}  # bf16 bits of 0.5
shapes = st.lists(st.integers(0, 5), min_size=0, max_size=4)
threads0 = C.get_num_threads()
nn_cap0 = next(iter(C.nn_cache_info().values()))["capacity"]
mm_cap0 = C.cache_info()["capacity"]
ran, refused = {}, {}
ENTRIES = [
    "matmul",
    "matmul_impl",
    "batch_norm_forward",
    "batch_norm_backward",
    "layer_norm_forward",
    "layer_norm_backward",
    "softmax_forward",
    "softmax_backward",
    "all_finite",
    "any_nan",
    "ew_unary",
    "EwProgram",
    "optim_update",
    "set_num_threads",
    "set_cache_capacity",
    "nn_set_cache_capacity",
    "conv_set_layout_policy",
    "conv_impl",
    "max_pool_backward",
]


def make(shape, dt, layout, pool, data):
    if layout == 3 and pool:  # another operand of this call
        return data.draw(st.sampled_from(pool))
    dt = np.dtype(dt)
    if layout == 1 and shape:  # every other element of a wider buffer
        a = np.full(tuple(shape[:-1]) + (2 * shape[-1],), FILL.get(dt.type, 0.5), dt)[..., ::2]
    elif layout == 2 and len(shape) >= 2:  # a transposed view
        a = np.full(tuple(shape[::-1]), FILL.get(dt.type, 0.5), dt).T
    else:
        a = np.full(tuple(shape), FILL.get(dt.type, 0.5), dt)
    pool.append(a)
    return a


@settings(max_examples=1500, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(
    data=st.data(),
    which=st.sampled_from(ENTRIES),
    base=shapes,
    bdt=st.sampled_from(DTYPES[:2]),
    i1=st.one_of(st.integers(-1, 4), huge),
    i2=geo,
    b1=st.booleans(),
    b2=st.booleans(),
    clean=st.booleans(),
)
def loop(data, which, base, bdt, i1, i2, b1, b2, clean):
    pool = []

    def A(shape=None, dt=None):
        # the call's own shape/dtype (every operand of a clean call), else now and then a stray one
        how = 0 if clean else data.draw(st.integers(0, 36))
        s = list(base if shape is None else shape)
        d = bdt if dt is None else dt
        if how == 8:
            s = data.draw(shapes)
        elif how == 9:
            d = data.draw(st.sampled_from(DTYPES))
        layout = {10: 1, 11: 2, 12: 3}.get(how, 0)
        return make(s, d, layout, pool, data)

    def O(shape=None, dt=None):  # optional operand
        return None if data.draw(st.integers(0, 3)) == 0 else A(shape, dt)

    f32 = np.float32
    C_ = base[1] if len(base) > 1 else (base[0] if base else 1)
    D = int(np.prod(base[1:])) if len(base) > 1 else 1
    M = base[0] if base else 1
    try:
        if which == "matmul":  # x [.., M, K] @ y[.., M, K]^T
            res = base[:-1] + base[-2:-1]
            C.matmul(
                A(),
                A(),
                out=O(res),
                transpose_x=not clean and b1,
                transpose_y=clean or b2,
                bias=O(base[-2:-1], f32),
                activation=data.draw(st.sampled_from(["none", "relu", "gelu", "x"])),
                residual=O(res),
                residual_before_activation=b2,
            )
        elif which == "matmul_impl":
            C.matmul_impl(A(), A(), b1, clean or b2)
        elif which == "batch_norm_forward":
            C.batch_norm_forward(
                A(),
                A(),
                O([C_], f32),
                O([C_], f32),
                A([C_], f32),
                A([C_], f32),
                A([C_], f32),
                A([C_], f32),
                A([C_], f32),
                A([C_], f32),
                1e-5,
                0.9,
                b1,
                b2,
            )
        elif which == "batch_norm_backward":
            C.batch_norm_backward(
                A(),
                A(),
                O([C_], f32),
                A([C_], f32),
                A([C_], f32),
                A(),
                A([C_], f32),
                A([C_], f32),
                1e-5,
                b1,
                b2,
            )
        elif which == "layer_norm_forward":
            C.layer_norm_forward(
                A(),
                A(),
                O([D], f32),
                O([D], f32),
                A([M], f32),
                A([M], f32),
                1e-5,
                1 if clean else i1,
            )
        elif which == "layer_norm_backward":
            C.layer_norm_backward(
                A(),
                A(),
                O([D], f32),
                A([M], f32),
                A([M], f32),
                A(),
                A([D], f32),
                A([D], f32),
                1e-5,
                1 if clean else i1,
            )
        elif which == "softmax_forward":
            C.softmax_forward(A(), A(), i1, b1)
        elif which == "softmax_backward":
            C.softmax_backward(A(dt=f32), A(dt=f32), A(dt=f32), i1, b1)
        elif which == "all_finite":
            C.all_finite(A())
        elif which == "any_nan":
            C.any_nan(A())
        elif which == "ew_unary":
            C.ew_unary(
                C.ew_opcode_names().index("exp")
                if clean
                else data.draw(st.one_of(geo, st.integers(0, 28))),
                A(dt=f32 if clean else None),
                A(dt=f32 if clean else None),
            )
        elif which == "EwProgram":
            if clean:  # a valid chain: add the two inputs, then one-operand ops
                names = C.ew_opcode_names()
                un = [
                    names.index(n)
                    for n in ("neg", "exp", "tanh", "sigmoid", "abs", "relu", "silu", "gelu_erf")
                ]
                nin, code = 2, [(names.index("add"), 3, 0, 1, -1, 0.0)]
                for op in data.draw(st.lists(st.sampled_from(un), max_size=3)):
                    code.append((op, 3, nin + len(code) - 1, -1, -1, 0.0))
            else:
                ops = st.one_of(st.integers(-1, 29), huge)
                code = data.draw(
                    st.lists(
                        st.tuples(
                            ops,
                            st.integers(-1, 4),
                            st.integers(-2, 4),
                            st.integers(-2, 4),
                            st.integers(-2, 4),
                            st.floats(-2, 2),
                        ),
                        min_size=0,
                        max_size=4,
                    )
                )
                nin = data.draw(st.one_of(st.integers(-1, 3), huge))
            prog = C.EwProgram(nin, code)
            k = prog.n_inputs
            ins = [A() for _ in range(k)]
            kinds = data.draw(
                st.lists(
                    st.one_of(st.integers(0, 1) if clean else st.integers(-1, 3), huge),
                    min_size=k,
                    max_size=k + (not clean),
                )
            )
            prog.run(ins, kinds, i1, A(dt=f32))
        elif which == "optim_update":
            n = [int(np.prod(base))]
            rule = data.draw(st.integers(0, 8) if clean else st.one_of(st.integers(-1, 9), huge))
            ns = [0, 1, 2, 2, 1, 2, 2, 2, 2][rule] if clean else data.draw(st.integers(0, 4))
            states = [A(n, f32) for _ in range(ns)]
            outs = [A(n, f32) for _ in range(data.draw(st.sampled_from([ns, ns, ns, ns + 1])))]
            seg = None
            if data.draw(st.booleans()):
                seg = np.array(
                    data.draw(st.lists(st.one_of(geo, st.integers(0, 120)), max_size=4)), np.int64
                )
            if clean:
                seg = None if rule != 7 else np.array([0], np.int64)
            C.optim_update(
                rule,
                A(n),
                A(n),
                A(n),
                states,
                outs,
                data.draw(st.lists(st.floats(-1, 1), max_size=8 if clean else 9)),
                [] if clean else data.draw(st.lists(st.booleans(), max_size=4)),
                seg,
            )
        elif which == "set_num_threads":
            C.set_num_threads(i1)
        elif which == "set_cache_capacity":
            C.set_cache_capacity(i1)
            C.matmul(np.ones((2, 2), f32), np.ones((2, 2), f32))
        elif which == "nn_set_cache_capacity":
            C.nn_set_cache_capacity(i1)
            C.softmax_forward(np.ones((2, 2), f32), np.zeros((2, 2), f32), 1, False)
        elif which == "conv_set_layout_policy":
            C.conv_set_layout_policy(i1)
        elif which == "conv_impl":
            x = np.ones((1, 4, 4, 4), f32)
            C.conv_impl(
                x,
                np.ones((4, 4, 3, 3), f32),
                np.zeros((1, 4, 2, 2), f32),
                [1, 1],
                [1, 1],
                [0, 0],
                [0, 0],
                1,
                False,
                i1,
            )
        else:
            gy = A(dt=f32)
            mask = A(dt=np.int32)
            if mask.dtype == np.int32 and mask.flags.writeable and mask.size:
                mask[...] = np.int32(np.clip(i2, -(2**31), 2**31 - 1))
            C.max_pool_backward(gy, mask, A(data.draw(shapes), f32), b1)
        ran[which] = ran.get(which, 0) + 1
    except (ValueError, TypeError, OverflowError, RuntimeError, MemoryError):
        refused[which] = refused.get(which, 0) + 1
    finally:
        C.set_num_threads(threads0)
        C.set_cache_capacity(mm_cap0)
        C.nn_set_cache_capacity(nn_cap0)
        C.conv_set_layout_policy(0)


loop()
import json

print("COUNTS", json.dumps({"ran": ran, "refused": refused, "entries": ENTRIES}))
"""


def test_every_native_entry_point_survives_extreme_input():
    p = subprocess.run([sys.executable, "-c", ALL_LOOP], capture_output=True, text=True,
                       timeout=240, env=dict(os.environ))
    assert p.returncode == 0 and "COUNTS" in p.stdout, f"exit {p.returncode}\n{p.stderr[-3000:]}"
    counts = json.loads(p.stdout.split("COUNTS", 1)[1])
    ran, refused = counts["ran"], counts["refused"]
    assert sum(ran.values()) + sum(refused.values()) >= 1500
    # every entry point was called, and the draws are not all rejected up front: the
    # kernels themselves ran on (some of) them
    for name in counts["entries"]:
        assert ran.get(name, 0) + refused.get(name, 0) >= 20, (name, counts)
        assert ran.get(name, 0) >= 1, (name, counts)
    assert sum(ran.values()) >= 300, counts


# ---- the inputs the audit found unchecked (each accepted, or crashed, on the old build)

C = _native.C


@pytest.mark.parametrize("kind", [256, -255, 3, -1])
def test_fused_elementwise_rejects_out_of_range_input_kinds(kind):
    # 256 read as 0 (full) and -255 as 1 (scalar) after the uint8 cast
    prog = C.EwProgram(1, [(C.ew_opcode_names().index("neg"), 3, 0, -1, -1, 0.0)])
    with pytest.raises(ValueError, match=f"fused_elementwise: input 0 has kind {kind}"):
        prog.run([np.ones(1, np.float32)], [kind], 0, np.zeros(1000, np.float32))


@pytest.mark.parametrize("n_inputs", [2**30, 4097])
def test_fused_elementwise_program_size_is_bounded(n_inputs):
    # 2**30 inputs used to allocate GiBs of value tables; 2**31 - 1 overflowed int
    with pytest.raises(ValueError, match=f"n_inputs must be in .0, 4096., got {n_inputs}"):
        C.EwProgram(n_inputs, [(0, 3, 0, 1, -1, 0.0)])
    with pytest.raises(ValueError, match="at most 4096 instructions"):
        C.EwProgram(1, [(6, 3, 0, -1, -1, 0.0)] + [(6, 3, k, -1, -1, 0.0) for k in range(1, 4097)])


@pytest.mark.parametrize("which", [-1, 3, 2**31 - 1])
def test_conv_impl_rejects_unknown_pass(which):
    x = np.ones((1, 4, 4, 4), np.float32)
    with pytest.raises(ValueError, match=f"conv_impl: which must be 0 .*got {which}"):
        C.conv_impl(x, np.ones((4, 4, 3, 3), np.float32), np.zeros((1, 4, 2, 2), np.float32),
                    [1, 1], [1, 1], [0, 0], [0, 0], 1, False, which)


@pytest.mark.parametrize("n", [0, -1, 100_000, 2**31 - 1])
def test_set_num_threads_is_bounded(n):
    before = C.get_num_threads()
    with pytest.raises(ValueError, match=f"set_num_threads: n must be .*got {n}"):
        C.set_num_threads(n)
    assert C.get_num_threads() == before
    C.set_num_threads(before)


@pytest.mark.parametrize("capacity", [-1, 2**64])
def test_cache_capacities_reject_negative(capacity):
    for f in (C.set_cache_capacity, C.nn_set_cache_capacity):
        with pytest.raises(TypeError):
            f(capacity)


def _momentum(p, g, po, v, vo):
    C.optim_update(1, p, g, po, [v], [vo], [0.1, 0.9], [])


def test_optimizer_update_rejects_overlapping_outputs_but_runs_in_place():
    buf = np.zeros(16, np.float32)
    p, g = np.ones(8, np.float32), np.ones(8, np.float32)
    # param_out shifted by one element into the state
    with pytest.raises(ValueError, match="momentum: param_out overlaps state 0"):
        _momentum(p, g, buf[1:9], buf[:8], np.zeros(8, np.float32))
    with pytest.raises(ValueError, match="momentum: param_out overlaps state output 0"):
        po = np.zeros(8, np.float32)
        _momentum(p, g, po, np.zeros(8, np.float32), po)
    with pytest.raises(ValueError, match="momentum: param_out overlaps grad"):
        _momentum(p, g, g, np.zeros(8, np.float32), np.zeros(8, np.float32))
    v = np.zeros(8, np.float32)
    _momentum(p, g, p, v, v)  # in place: the documented use
    assert np.all(np.isfinite(p)) and not np.all(p == 1)


def test_matmul_rejects_views_whose_strides_overflow_offsets():
    # an as_strided view spanning 2**62 bytes: the old build handed oneDNN the strides
    code = ("import numpy as np; from numpy.lib.stride_tricks import as_strided\n"
            "from fw.core import _native\n"
            "x = as_strided(np.ones(64, np.float32), (2, 4, 5), (2**62, 20, 4))\n"
            "try:\n    _native.C.matmul(x, np.ones((2, 5, 3), np.float32))\n"
            "except ValueError as e:\n    print('REJECTED', e)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "REJECTED matmul: x is a view whose strides span" in p.stdout, (
        f"exit {p.returncode}\n{p.stdout}{p.stderr[-2000:]}")
