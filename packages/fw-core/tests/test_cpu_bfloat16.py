"""The inference pass ``cpu_bfloat16`` (fw.core.ir.passes.cpu_bfloat16) and the native
float32 -> bfloat16 ``cast`` kernel (fw.core.kernels.cpu.bf16).

Tolerance, derived per output element from the op's length K (the products' sums):
x and W are each rounded to bf16 (relative error <= 2**-9 each), so each of the K
products x_k W_k is off by at most about 2**-8 |x_k| |W_k|, and the sum by at most
``2**-8 * sum_k |x_k| |W_k|`` (= ``2**-8 * (|x| @ |W|)``: K terms, computed here with
the absolute values); the bias adds ``2**-9 |b|``, the activation multiplies by its
Lipschitz constant (relu 1, gelu < 1.13), the residual's rounding adds ``2**-9 |r|`` and
the result's rounding ``2**-9 |out|`` (taken as 2**-8 for slack). float32 accumulation
error (K * 2**-24 relative) is far below these. The tests also check against a NumPy
emulation of the bf16 semantics (inputs rounded, f64 sums, result rounded), which the
pass's output must match up to one bf16 rounding step."""

import logging

import ml_dtypes
import numpy as np
import pytest

import fw
from fw.core import _native
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.ir import TensorType, run, trace, verify
from fw.core.ir.passes import PassManager, get_pass
from fw.core.ir.passes.cpu_bfloat16 import resolve_op_types
from fw.core.kernels.cpu import bf16 as bf16_kernels
from fw.core.ops import OPS
from fw.core.testing import as_tuple

F32 = np.float32
BF16 = ml_dtypes.bfloat16
U = 2.0 ** -8  # two bf16 roundings (2**-9 each) of a product's factors
GELU_LIPSCHITZ = 1.13


def _const(a, name):
    t = fw.to_tensor(np.ascontiguousarray(a, F32))
    t.name = name
    t.persistable = True  # not trainable: a block-0 constant, as in a predictor
    return t


def _bf(a):
    return np.asarray(a, F32).astype(BF16).astype(np.float64)


def _outputs(p, inputs):
    return [o.numpy() for o in as_tuple(run(p, *inputs))]


def _types(p, name):
    return [str(op.results[0].type) for op in p.walk() if op.name == name]


def _bf16_program(p, **options):
    q = p.clone()
    fused = PassManager(["fuse_conv_bias_act", "fuse_matmul_bias_act"])
    fused.run(q)
    get_pass("cpu_bfloat16", require_native=False, **options).run(q)
    PassManager(["fuse_elementwise", "cse", "dce"]).run(q)
    verify(q)
    return q


# ---------------------------------------------------------------- products
@pytest.mark.parametrize("act,residual,k", [("none", False, 256), ("gelu", True, 256),
                                            ("relu", True, 64), ("gelu", False, 1024)])
def test_linear_bf16_within_the_k_derived_bound(act, residual, k):
    rng = np.random.default_rng(k)
    n, rows = 256, (128 if k < 128 else 32)  # >= 2**20 multiply-adds per sample
    W = rng.standard_normal((k, n)) / np.sqrt(k)
    b = rng.standard_normal(n) * 0.1
    w_t, b_t = _const(W, "w"), _const(b, "b")

    def f(x, r):
        y = fw.nn.functional.linear(x, w_t, b_t)
        y = {"none": lambda v: v, "gelu": fw.nn.functional.gelu,
             "relu": fw.nn.functional.relu}[act](y)
        return y + r if residual else y

    p = trace(f, [TensorType([-1, rows, k], "float32"), TensorType([-1, rows, n], "float32")])
    q = _bf16_program(p)
    assert _types(q, "fused_matmul") == [f"bf16[-1,{rows},{n}]"]
    x = rng.standard_normal((2, rows, k)).astype(F32)
    r = rng.standard_normal((2, rows, n)).astype(F32)
    want = _outputs(p, [x, r])[0]
    got = _outputs(q, [x, r])[0]
    assert got.dtype == F32 and got.shape == want.shape
    lip = GELU_LIPSCHITZ if act == "gelu" else 1.0
    bound = lip * (U * (np.abs(x) @ np.abs(W)) + 2.0 ** -9 * np.abs(b)) + U * np.abs(got) + 1e-6
    if residual:
        bound += 2.0 ** -9 * np.abs(r)
    err = np.abs(got - want)
    assert np.all(err <= bound), float(np.max(err / bound))
    assert err.max() > 0  # bf16 did run: float32 would be equal
    # the ops' bf16 definition: inputs rounded, exact sums, result rounded once
    v = _bf(x) @ _bf(W) + _bf(b)
    if act == "relu":
        v = np.maximum(v, 0)
    elif act == "gelu":
        from math import erf

        v = 0.5 * v * (1 + np.vectorize(erf)(v / np.sqrt(2)))
    if residual:
        v = v + _bf(r)
    emul = v.astype(F32).astype(BF16).astype(np.float64)
    np.testing.assert_allclose(got, emul, rtol=2.0 ** -7, atol=1e-5)


def test_consecutive_products_hand_bf16_to_each_other():
    rng = np.random.default_rng(1)
    w1, w2 = _const(rng.standard_normal((256, 512)) / 16, "w1"), \
        _const(rng.standard_normal((512, 256)) / 22, "w2")

    def f(x):
        return fw.nn.functional.linear(fw.nn.functional.gelu(fw.nn.functional.linear(x, w1)),
                                       w2)

    p = trace(f, [TensorType([-1, 64, 256], "float32")])
    q = _bf16_program(p)
    casts = _types(q, "cast")
    # one conversion in, one out: the f32 result of the first product is not rebuilt
    assert casts == ["bf16[-1,64,256]", "f32[-1,64,256]"], casts
    assert all(t.startswith("bf16") for t in _types(q, "fused_matmul"))
    # the weights were converted once, here: bf16 constants, the f32 ones gone
    consts = [a for a in q.block.args if a.role == "const"]
    assert sorted(str(a.type) for a in consts) == ["bf16[256,512]", "bf16[512,256]"]
    x = rng.standard_normal((1, 64, 256)).astype(F32)
    want, got = _outputs(p, [x])[0], _outputs(q, [x])[0]
    assert np.abs(got - want).max() <= 0.02 * np.abs(want).max()


def test_ops_outside_the_set_and_small_products_stay_float32():
    rng = np.random.default_rng(2)
    big = _const(rng.standard_normal((256, 256)) / 16, "big")
    small = _const(rng.standard_normal((256, 10)) / 16, "small")
    g, beta = _const(np.ones(256), "g"), _const(np.zeros(256), "beta")

    def f(x):
        h = fw.nn.functional.layer_norm(fw.nn.functional.linear(x, big), [256], g, beta)
        return fw.nn.functional.softmax(fw.nn.functional.linear(h, small), -1)

    p = trace(f, [TensorType([-1, 64, 256], "float32")])
    q = _bf16_program(p)
    # 64 x 256 x 10 multiply-adds per sample (< 2**20): float32; so are layer_norm and
    # softmax, which the pass never converts
    assert _types(q, "fused_matmul") == ["bf16[-1,64,256]", "f32[-1,64,10]"]
    assert _types(q, "layer_norm") == ["f32[-1,64,256]"]
    assert _types(q, "softmax") == ["f32[-1,64,10]"]
    # set_bfloat16_op's meaning: only the named ops (Paddle's conv2d: no product here)
    assert get_pass("cpu_bfloat16", op_types={"conv2d"}, require_native=False).run(
        p.clone()) is False


# ---------------------------------------------------------------- convolutions
def _conv_net(rng, cin=16, cout=32):
    W = rng.standard_normal((cout, cin, 3, 3)) / np.sqrt(cin * 9)
    b = rng.standard_normal(cout) * 0.1
    W2 = rng.standard_normal((cout, cout, 3, 3)) / np.sqrt(cout * 9)
    return W, b, W2


def test_conv_bf16_within_the_k_derived_bound():
    rng = np.random.default_rng(3)
    W, b, W2 = _conv_net(rng)

    def make(Wa, ba, W2a):
        w_t, b_t, w2_t = _const(Wa, "w"), _const(ba, "b"), _const(W2a, "w2")

        def f(x):
            y = fw.nn.functional.relu(fw.nn.functional.conv2d(x, w_t, b_t, padding=1))
            y = fw.nn.functional.max_pool2d(y, 2, 2)
            return fw.nn.functional.conv2d(y, w2_t, padding=1)

        return trace(f, [TensorType([-1, 16, 32, 32], "float32")])

    p = make(W, b, W2)
    q = _bf16_program(p)
    assert _types(q, "fused_conv") == ["bf16[-1,32,32,32]"]
    assert _types(q, "max_pool") == ["bf16[-1,32,16,16]"]  # exact on bf16 values
    assert _types(q, "conv") == ["bf16[-1,32,16,16]"]
    x = rng.standard_normal((1, 16, 32, 32)).astype(F32)
    want, got = _outputs(p, [x])[0], _outputs(q, [x])[0]
    # the first layer's output error bound propagates through the second conv; K of
    # each: C_in * 3 * 3. |x| (*) |W| per layer from the float32 program on absolute
    # values (the pool and relu are 1-Lipschitz)
    a1 = _outputs(make(np.abs(W), np.abs(b), np.abs(W2)), [np.abs(x)])[0]
    h = np.maximum(_outputs(trace(lambda v: fw.nn.functional.max_pool2d(
        fw.nn.functional.relu(fw.nn.functional.conv2d(v, _const(W, "w"), _const(b, "b"),
                                                      padding=1)), 2, 2),
        [TensorType([-1, 16, 32, 32], "float32")]), [x])[0], 0)
    e1 = U * np.abs(h) + U * _outputs(trace(lambda v: fw.nn.functional.max_pool2d(
        fw.nn.functional.conv2d(v, _const(np.abs(W), "w"), _const(np.abs(b), "b"),
                                padding=1), 2, 2),
        [TensorType([-1, 16, 32, 32], "float32")]), [np.abs(x)])[0]
    e_prop = _outputs(trace(lambda v: fw.nn.functional.conv2d(
        v, _const(np.abs(W2), "w2"), padding=1), [TensorType([-1, 32, 16, 16], "float32")]),
        [e1.astype(F32)])[0]
    bound = e_prop + U * a1 + U * np.abs(got) + 1e-5
    err = np.abs(got - want)
    assert np.all(err <= bound), float(np.max(err / bound))
    assert err.max() > 0


def test_max_pool_of_a_float32_value_stays_float32():
    def f(x):
        return fw.nn.functional.max_pool2d(x, 2, 2)

    p = trace(f, [TensorType([-1, 64, 64, 64], "float32")])
    assert get_pass("cpu_bfloat16", require_native=False).run(p) is False


# ---------------------------------------------------------------- the CPU check
def test_no_native_bf16_warns_and_keeps_float32(monkeypatch, caplog):
    rng = np.random.default_rng(4)
    w = _const(rng.standard_normal((256, 256)), "w")
    p = trace(lambda x: fw.nn.functional.linear(x, w), [TensorType([-1, 64, 256], "float32")])
    PassManager(["fuse_matmul_bias_act"]).run(p)
    text = str(p)
    monkeypatch.setattr(bf16_kernels, "cpu_isa", lambda: "avx2")
    assert not bf16_kernels.native_bf16()
    with caplog.at_level(logging.WARNING, logger="fw.core.ir"):
        assert get_pass("cpu_bfloat16").run(p) is False
    assert str(p) == text
    assert "no native bfloat16" in caplog.text and "'avx2'" in caplog.text


def test_native_bf16_isas():
    assert bf16_kernels.native_bf16("avx512_core_bf16") and bf16_kernels.native_bf16(
        "avx512_core_amx")
    assert not any(bf16_kernels.native_bf16(i) for i in ("avx2", "avx512_core",
                                                         "avx512_core_vnni", ""))


def test_op_types_errors():
    assert resolve_op_types(None) == resolve_op_types([]) == frozenset(
        {"fused_matmul", "fused_conv", "conv", "max_pool"})
    assert resolve_op_types({"fc", "softmax"}) == {"fused_matmul"}
    with pytest.raises(InvalidTypeError, match="op_types must be a set or list"):
        resolve_op_types("conv2d")
    with pytest.raises(InvalidTypeError, match="op names are strings"):
        resolve_op_types(["conv2d", 3])
    with pytest.raises(InvalidArgumentError, match="require_native must be a bool"):
        get_pass("cpu_bfloat16", require_native="yes")


# ---------------------------------------------------------------- native kernels
@pytest.mark.skipif(_native.C is None, reason="needs the native extension")
def test_bf16_products_use_no_reference_primitive():
    """The bf16 primitives the pass's ops create: oneDNN's jit (brgemm) kernels on a
    native-bf16 CPU, never its reference fallback."""
    rng = np.random.default_rng(5)
    W, b, W2 = _conv_net(rng)
    wl = _const(rng.standard_normal((2048, 256)) / 45, "wl")
    w_t, b_t, w2_t = _const(W, "w"), _const(b, "b"), _const(W2, "w2")

    def f(x):
        y = fw.nn.functional.relu(fw.nn.functional.conv2d(x, w_t, b_t, padding=1))
        y = fw.nn.functional.conv2d(y, w2_t, padding=1, data_format="NCHW")
        return fw.nn.functional.linear(y.reshape([-1, 32, 1024]).transpose([0, 2, 1]).reshape(
            [-1, 4, 2048]), wl)

    p = trace(f, [TensorType([-1, 16, 32, 32], "float32")])
    q = _bf16_program(p)
    _native.C.nn_clear_cache()  # conv/norm caches too: primitives of earlier tests
    _native.clear_cache()
    _outputs(q, [rng.standard_normal((2, 16, 32, 32)).astype(F32)])
    impls = _native.primitive_impls()
    used = [i for v in impls.values() for i in v]
    assert used and not [i for i in used if i.startswith("ref")], impls
    if bf16_kernels.native_bf16():
        assert any("bf16" in i for i in impls["matmul"]), impls
        assert any("bf16" in i for i in impls["conv_fwd"]), impls


def test_cast_kernel_is_bit_identical():
    kernel = OPS["cast"].kernels.get("cpu")
    if kernel is None:
        pytest.skip("needs the native extension")
    rng = np.random.default_rng(6)
    x = (rng.standard_normal(10_000) * 1e3).astype(F32)
    x[:9] = [np.nan, -np.nan, np.inf, -np.inf, 3.3961e38, -0.0, 1e-40, -1e-45, 65535.5]
    x[9:100] = rng.integers(0, 2**31, 91).astype(np.uint32).view(F32)  # any bit pattern
    got = kernel(x, dtype=fw.bfloat16)
    want = x.astype(BF16)
    assert got.dtype == BF16
    nan = np.isnan(want.astype(F32))
    assert np.array_equal(np.isnan(got.astype(F32)), nan)
    assert np.array_equal(got.view(np.uint16)[~nan], want.view(np.uint16)[~nan])
    # strided, small and other dtypes: the reference's answer
    np.testing.assert_array_equal(kernel(x[::2], dtype=fw.bfloat16).view(np.uint16),
                                  x[::2].astype(BF16).view(np.uint16))
    assert kernel(x[:10].astype(np.float64), dtype=fw.float32).dtype == F32
