"""Hypothesis-drawn small programs: a chain of elementwise, unary, matmul,
reshape, transpose, reduce, concat and softmax ops over a small input, exported and
run on onnxruntime, equals fw's eager result."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from onnx_testutil import assert_same, export_run, fw_outputs, session

import fw
import fw.nn.functional as F
from fw.jit import InputSpec

UNARY = {"tanh": fw.tanh, "sigmoid": fw.sigmoid, "abs": fw.abs, "neg": fw.neg, "relu": F.relu,
         "exp_tanh": lambda x: fw.exp(fw.tanh(x)), "sqrt_abs": lambda x: fw.sqrt(fw.abs(x)),
         "gelu": F.gelu, "silu": F.silu, "square": fw.square}
BINARY = {"add": fw.add, "subtract": fw.subtract, "multiply": fw.multiply,
          "maximum": fw.maximum, "minimum": fw.minimum}
REDUCE = {"sum": fw.sum, "mean": fw.mean, "max": fw.max, "min": fw.min}


@st.composite
def programs(draw, dynamic=False):
    """(steps, input shape, dtype): a chain applied to x. Each step is a tuple whose
    constants (weights, operands) are drawn here, so tracing and the eager run see
    the same values. ``dynamic``: the steps keep axis 0 a batch axis of any size
    (they reshape, transpose and reduce the other axes only)."""
    rank = draw(st.integers(2 if dynamic else 1, 3))
    shape = [draw(st.integers(1, 4)) for _ in range(rank)]
    in_shape = tuple(shape)
    dtype = draw(st.sampled_from(["float32", "float64"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    steps = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["unary", "binary", "matmul", "reshape", "transpose",
                                     "reduce", "concat", "softmax"]))
        rank = len(shape)
        if dynamic and rank < 2 and kind in ("matmul", "reshape", "transpose", "reduce"):
            continue  # x is the batch axis alone: nothing but elementwise steps
        if kind == "unary":
            # onnxruntime's CPU provider has no float64 Erf kernel (exact gelu uses Erf;
            # the graph itself is valid ONNX, which types Erf for doubles)
            names = sorted(UNARY) if dtype == "float32" else sorted(set(UNARY) - {"gelu"})
            steps.append(("unary", draw(st.sampled_from(names))))
        elif kind == "binary":
            # the other operand broadcasts: some of x's trailing dims, some set to 1
            k = draw(st.integers(0, rank))
            oshape = [d if draw(st.booleans()) else 1 for d in shape[rank - k:]]
            if dynamic and k == rank:
                oshape[0] = 1  # broadcast along the batch
            other = rng.standard_normal(oshape).astype(dtype)
            steps.append(("binary", draw(st.sampled_from(sorted(BINARY))), other))
        elif kind == "matmul" and rank >= 1:
            n = draw(st.integers(1, 4))
            w = (rng.standard_normal((shape[-1], n)) / np.sqrt(shape[-1])).astype(dtype)
            steps.append(("matmul", w))
            shape = shape[:-1] + [n]
        elif kind == "reshape" and dynamic:
            steps.append(("reshape", [0, -1]))  # keep the batch (ONNX/Paddle 0: copy)
            shape = [shape[0], int(np.prod(shape[1:]))]
        elif kind == "reshape":
            size = int(np.prod(shape))
            divisors = [d for d in range(1, size + 1) if size % d == 0]
            first = draw(st.sampled_from(divisors))
            new = [first, -1] if draw(st.booleans()) else [-1]
            steps.append(("reshape", new))
            shape = [first, size // first] if len(new) == 2 else [size]
        elif kind == "transpose" and rank >= 2:
            perm = draw(st.permutations(list(range(rank))))
            if dynamic:
                perm = [0] + [p for p in perm if p != 0]
            steps.append(("transpose", list(perm)))
            shape = [shape[p] for p in perm]
        elif kind == "reduce" and rank >= 2:
            axis = draw(st.integers(1 if dynamic else -rank, rank - 1))
            keep = draw(st.booleans())
            steps.append(("reduce", draw(st.sampled_from(sorted(REDUCE))), axis, keep))
            a = axis % rank
            shape = shape[:a] + ([1] if keep else []) + shape[a + 1:]
        elif kind == "concat":
            axis = draw(st.integers(0, rank - 1))
            steps.append(("concat", axis))
            shape = shape[:axis] + [2 * shape[axis]] + shape[axis + 1:]
        elif kind == "softmax":
            steps.append(("softmax", draw(st.integers(-rank, rank - 1))))
    return steps, in_shape, dtype


def run_chain(steps, x):
    for s in steps:
        kind = s[0]
        if kind == "unary":
            x = UNARY[s[1]](x)
        elif kind == "binary":
            x = BINARY[s[1]](x, fw.to_tensor(s[2]))
        elif kind == "matmul":
            x = fw.matmul(x, fw.to_tensor(s[1]))
        elif kind == "reshape":
            x = x.reshape(s[1])
        elif kind == "transpose":
            x = x.transpose(s[1])
        elif kind == "reduce":
            x = REDUCE[s[1]](x, axis=s[2], keepdim=s[3])
        elif kind == "concat":
            x = fw.concat([x, x * 0.5], axis=s[1])
        elif kind == "softmax":
            x = F.softmax(x, axis=s[1])
    return x


TOL = {"float32": 1e-5, "float64": 1e-10}


@given(programs(), st.integers(0, 2**16))
def test_random_program_matches_fw(program, seed):
    steps, shape, dtype = program
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)

    def fn(x):
        return run_chain(steps, x)

    got, _ = export_run(fn, [x], [InputSpec(list(shape), dtype, "x")])
    assert_same(got, fw_outputs(fn, [x]), atol=TOL[dtype], rtol=TOL[dtype])


@given(programs(dynamic=True), st.integers(0, 2**16))
def test_random_program_with_a_dynamic_batch(program, seed):
    steps, shape, dtype = program
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)

    def fn(x):
        return run_chain(steps, x)

    spec = [InputSpec([None, *shape[1:]], dtype, "x")]
    got, path = export_run(fn, [x], spec)
    assert_same(got, fw_outputs(fn, [x]), atol=TOL[dtype], rtol=TOL[dtype])
    # the same file at another batch size
    x2 = rng.standard_normal((shape[0] + 2, *shape[1:])).astype(dtype)
    got2 = session(path, fuse=dtype != "float64").run(None, {"x": x2})
    assert_same(got2, fw_outputs(fn, [x2]), atol=TOL[dtype], rtol=TOL[dtype])
