"""The gpu runtime's fast paths (issue 17): generated kernels for fused elementwise
chains (fw.core.kernels.gpu.fusion) and CUDA-graph replay of compiled programs
(fw.core.kernels.gpu.graphs).

Without a GPU: the generated CUDA body is compiled as host C++ (g++, when present)
and run on random inputs against the op's reference, which checks every opcode's
formula; the graph runner's host-side logic (packing, eligibility, the switch) is
checked directly. With FW_TEST_DEVICE=gpu (ci/gpu/run.sh): the kernels and the graphs
are compared with the reference/eager results on the GPU."""

import ctypes
import math
import shutil
import subprocess
import warnings

import numpy as np
import pytest

import fw
from fw.core import dtypes as _dt
from fw.core.kernels.gpu import fusion, graphs
from fw.core.kernels.gpu.program import fuse_program
from fw.core.ops._registry import OPS
from fw.core.testing import device as _dev

GPU = _dev.is_real_gpu()
needs_gpu = pytest.mark.skipif(not GPU, reason="needs FW_TEST_DEVICE=gpu (CuPy and a GPU)")
F32, F64, B = _dt.float32, _dt.float64, _dt.bool_
_UNARY = ("neg", "exp", "log", "tanh", "sigmoid", "sqrt", "rsqrt", "abs", "relu", "silu")
_BINARY = ("add", "subtract", "multiply", "divide", "maximum", "minimum")
_COMPARE = ("equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal")


def _programs(d):
    """(name, n_inputs, program) covering every opcode in dtype `d`."""
    other = F64 if d is F32 else F32
    out = []
    for op in _UNARY:
        out.append((op, 1, ((op, d, (0,), ()),)))
    for op in _BINARY:
        out.append((op, 2, ((op, d, (0, 1), ()),)))
    for op in _COMPARE:  # a comparison feeds a where: the result is a float again
        out.append((op, 2, ((op, B, (0, 1), ()), ("where", d, (2, 0, 1), ()))))
    out.append(("gelu_erf", 1, (("gelu", d, (0,), (False,)),)))
    out.append(("gelu_tanh", 1, (("gelu", d, (0,), (True,)),)))
    for e in (2.0, 0.5, -1.0, 3.0, 1.0):
        out.append((f"pow{e}", 1, (("pow", d, (0,), (e,)),)))
    out.append(("cast_roundtrip", 1, (("cast", other, (0,), ()), ("tanh", other, (1,), ()),
                                      ("cast", d, (2,), ()))))
    out.append(("cast_bool", 1, (("cast", B, (0,), ()), ("cast", d, (1,), ()))))
    out.append(("consts", 2, (("const", d, (), (0.5,)), ("multiply", d, (0, 2), ()),
                              ("const", d, (), (math.inf,)), ("minimum", d, (3, 4), ()),
                              ("add", d, (5, 1), ()))))
    out.append(("chain", 3, (("silu", d, (0,), ()), ("const", d, (), (-1.0,)),
                             ("multiply", d, (3, 4), ()), ("greater_than", B, (5, 1), ()),
                             ("where", d, (6, 5, 2), ()), ("relu", d, (7,), ()))))
    return out


def _tol(prog):
    """float32 ulps when any step computes in float32 (libm's and the GPU's math
    functions may differ from NumPy's by an ulp or two), else float64's."""
    return 2e-6 if any(ins[1] is F32 for ins in prog) else 1e-12


def _inputs(rng, n, d, shape=(257,)):
    vals = rng.standard_normal((n,) + shape) * 3
    vals[..., :4] = [0.0, -0.0, np.nan, np.inf]  # edge values in every input
    vals[..., 4:8] = [-np.inf, 1e-30, -2.0, 0.5]
    return [v.astype(d.np) for v in vals]


# ---------------------------------------------------------------- host C++ harness
_PRELUDE = r"""
#include <cmath>
#include <cstring>
#include <cstdint>
static inline float __int_as_float(unsigned int b) { float f; std::memcpy(&f, &b, 4); return f; }
static inline double __longlong_as_double(long long b) {
  double f; std::memcpy(&f, &b, 8); return f; }
"""
_CT = {"bool": "bool", "float32": "float", "float64": "double"}


def _host_function(name, src):
    in_params, out_param, body = src
    ins = [p.split() for p in in_params.split(", ")]
    ot = _CT[out_param.split()[0]]
    args = ", ".join(f"const {_CT[t]}* X{i}" for i, (t, _) in enumerate(ins))
    loads = " ".join(f"{_CT[t]} {n} = X{i}[k];" for i, (t, n) in enumerate(ins))
    return (f'extern "C" void {name}(long n, {args}, {ot}* Y) {{\n'
            f"  for (long k = 0; k < n; ++k) {{ {loads} {ot} y;\n{body}\n  Y[k] = y; }}\n}}\n")


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory):
    """{(dtype name, program name): (n_inputs, program, callable)} compiled by g++."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed")
    progs, text = {}, [_PRELUDE]
    for d in (F32, F64):
        for name, n, prog in _programs(d):
            fn = f"k_{d.name}_{name}".replace(".", "_").replace("-", "m")
            src = fusion.cuda_source(prog, [d] * n, prog[-1][1])
            text.append(_host_function(fn, src))
            progs[(d.name, name)] = (n, prog, fn)
    tmp = tmp_path_factory.mktemp("fusion")
    cpp, so = tmp / "k.cpp", tmp / "k.so"
    cpp.write_text("\n".join(text))
    # -ffp-contract=off: no fused multiply-adds, as NumPy computes
    r = subprocess.run([gxx, "-O1", "-ffp-contract=off", "-shared", "-fPIC", "-o", str(so),
                        str(cpp)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    lib = ctypes.CDLL(str(so))
    return {k: (n, prog, getattr(lib, fn)) for k, (n, prog, fn) in progs.items()}


def _run_host(fn, xs, out_dtype):
    y = np.empty(xs[0].shape, out_dtype)
    ptr = [ctypes.c_void_p(x.ctypes.data) for x in xs]
    fn(ctypes.c_long(y.size), *ptr, ctypes.c_void_p(y.ctypes.data))
    return y


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_generated_formulas_match_the_reference(host_kernels, dtype):
    """Every opcode's generated expression, run as host C++, equals the op's reference
    on random and edge values (0, -0, NaN, +-inf, tiny)."""
    d = _dt.convert_dtype(dtype)
    rng = np.random.default_rng(7)
    ref = OPS["fused_elementwise"].reference
    bad = []
    for (dn, name), (n, prog, fn) in host_kernels.items():
        if dn != dtype:
            continue
        tol = _tol(prog)
        xs = _inputs(rng, n, d)
        want = np.asarray(ref(xs, program=prog, out_dtype=prog[-1][1]))
        with np.errstate(all="ignore"):
            got = _run_host(fn, xs, want.dtype)
        try:
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
        except AssertionError as e:
            bad.append(f"{name}: {str(e)[:300]}")
    assert not bad, "\n".join(bad)


def test_cuda_source_refuses_what_it_cannot_generate():
    prog = (("exp", _dt.float16, (0,), ()),)
    with pytest.raises(fusion.Unsupported, match="float16"):
        fusion.cuda_source(prog, [_dt.float16], _dt.float16)
    with pytest.raises(fusion.Unsupported, match="mod"):
        fusion.cuda_source((("mod", F32, (0, 1), ()),), [F32, F32], F32)


def test_literals_are_exact():
    assert fusion._literal(0.1, F32) == f"((float){float(np.float32(0.1))!r})"
    assert fusion._literal(math.nan, F64).startswith("__longlong_as_double(0x7ff8")
    assert fusion._literal(-math.inf, F32) == "__int_as_float(0xff800000)"
    assert fusion._literal(True, B) == "true"


def test_fuse_program_leaves_the_original_alone(monkeypatch):
    from fw.core.ir import TensorType, trace

    p = trace(lambda x, y: fw.nn.functional.relu(x * 2.0 + y) - 1.0,
              [TensorType([4, 3], "float32"), TensorType([4, 3], "float32")])
    before = [op.name for op in p.block.ops]
    fused = fuse_program(p)
    assert fused is not p and [op.name for op in p.block.ops] == before
    assert [op.name for op in fused.block.ops if op.name != "full"] == ["fused_elementwise"]
    monkeypatch.setenv("FW_GPU_FUSION", "0")
    assert fuse_program(p) is p


def test_fused_device_program_equals_the_unfused_one():
    """A to_static function run on the test device compiles the fused clone; its
    result equals the cpu run (the fake device runs the fused op's reference)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    y = rng.standard_normal((7,)).astype(np.float32)

    def f(a, b):
        return fw.tanh(fw.nn.functional.silu(a) * 0.5 + b) * a - fw.exp(-a)

    want = f(fw.to_tensor(x), fw.to_tensor(y)).numpy()
    p = _dev.place()
    got = fw.jit.to_static(f)(fw.to_tensor(x, place=p), fw.to_tensor(y, place=p))
    assert got.place == p
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- graphs, host side
def test_host_pack_round_trip():
    vals = {0: np.array([1.5], np.float32), 3: np.float64(2.0), 5: np.arange(6.0).reshape(2, 3),
            7: np.array([4.0, 5.0], np.float32)}
    pack = graphs.HostPack(list(vals.items()))
    assert [(np.dtype(dt), n) for dt, _, n in pack.layout] == [(np.float32, 3), (np.float64, 7)]
    flats = [np.empty(n, dt) for dt, _, n in pack.layout]
    pack.pack(vals, flats)
    np.testing.assert_array_equal(flats[0], [1.5, 4.0, 5.0])
    back = pack.unpack(flats)
    for k, v in vals.items():
        assert back[k].shape == np.shape(v)
        np.testing.assert_array_equal(back[k], v)


def test_graph_switch_and_eligibility(monkeypatch):
    from fw.core.ir import TensorType, trace

    monkeypatch.delenv("FW_GPU_GRAPHS", raising=False)
    assert not graphs.enabled()
    monkeypatch.setenv("FW_GPU_GRAPHS", "1")
    assert graphs.enabled()
    t = [TensorType([3], "float32")]
    assert graphs.eligible(trace(lambda x: fw.exp(x) + 1.0, t)) is None
    why = graphs.eligible(trace(lambda x: fw.nn.functional.dropout(x, 0.5), t))
    assert why is not None and "random" in why


def test_no_graph_off_the_gpu(monkeypatch):
    """Graphs need CuPy: a compiled program for another backend never gets one."""
    from fw.core.ir import TensorType, trace
    from fw.core.ir.executor import Compiled

    monkeypatch.setenv("FW_GPU_GRAPHS", "1")
    p = trace(lambda x: fw.exp(x) + 1.0, [TensorType([3], "float32")])
    assert Compiled(p, "cpu")._graph is None


# ---------------------------------------------------------------- on the GPU
@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_fused_kernel_matches_the_reference(dtype):
    import cupy

    d = _dt.convert_dtype(dtype)
    _dev.place()  # makes the gpu backend, which attaches its kernels
    kern = OPS["fused_elementwise"].kernels["gpu"]
    ref = OPS["fused_elementwise"].reference
    rng = np.random.default_rng()
    for name, n, prog in _programs(d):
        host = _inputs(rng, n, d, (3, 257))
        if n > 1:  # a broadcast input: one row, as a bias
            host[-1] = host[-1][:1, :]
        xs = [cupy.asarray(h) for h in host]
        got = cupy.asnumpy(kern(xs, program=prog, out_dtype=prog[-1][1]))
        # against the cpu reference: the op records hold the GPU to NumPy's values
        want = np.asarray(ref(host, program=prog, out_dtype=prog[-1][1]))
        tol = _tol(prog)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=name)


def _mlp_step(static, lr_sched=False):
    fw.seed(0)
    nn = fw.nn
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 16), nn.GELU(),
                          nn.LayerNorm(16), nn.Linear(16, 3)).to(device=_dev.place())
    lr = fw.optimizer.lr.StepDecay(1e-2, step_size=2, gamma=0.5) if lr_sched else 1e-2
    opt = fw.optimizer.Adam(lr, parameters=model.parameters())

    def step(a, b):
        loss = fw.nn.functional.cross_entropy(model(a), b)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return model, opt, (fw.jit.to_static(step) if static else step)


def _train(static, steps, lr_sched=False):
    rng = np.random.default_rng(123)
    model, opt, step = _mlp_step(static, lr_sched)
    p = _dev.place()
    losses = []
    for _ in range(steps):
        x = fw.to_tensor(rng.standard_normal((8, 12)).astype(np.float32), place=p)
        y = fw.to_tensor(rng.integers(0, 3, 8).astype(np.int64), place=p)
        losses.append(float(step(x, y)))
        if lr_sched:
            opt._learning_rate.step()
    return losses, model


@needs_gpu
@pytest.mark.parametrize("lr_sched", [False, True], ids=["const-lr", "step-decay"])
def test_gpu_graph_replay_equals_eager(monkeypatch, lr_sched):
    """FW_GPU_GRAPHS=1: a to_static train step replayed as a CUDA graph (warm-up,
    capture, replays on new inputs each step) trains exactly as eager does."""
    monkeypatch.setenv("FW_GPU_GRAPHS", "1")
    le, me = _train(False, 7, lr_sched)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a failed capture warns: fail
        ls, ms = _train(True, 7, lr_sched)
    np.testing.assert_allclose(ls, le, rtol=1e-4, atol=1e-5)
    for (n, a), (_, b) in zip(me.state_dict().items(), ms.state_dict().items()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-4, atol=1e-5, err_msg=n)


@needs_gpu
def test_gpu_graph_counts_replays(monkeypatch):
    from fw.core.ir import TensorType, trace
    from fw.core.ir.executor import Compiled

    monkeypatch.setenv("FW_GPU_GRAPHS", "1")
    p = trace(lambda x, y: fw.matmul(x, y).exp().sum(), [TensorType([4, 5], "float32"),
                                                        TensorType([5, 3], "float32")])
    c = Compiled(p, "gpu")
    assert c._graph is not None
    import cupy

    rng = np.random.default_rng()
    for _ in range(5):
        a = rng.standard_normal((4, 5)).astype(np.float32)
        b = rng.standard_normal((5, 3)).astype(np.float32)
        (got,) = c([cupy.asarray(a), cupy.asarray(b)])
        np.testing.assert_allclose(float(got), np.exp(a @ b).sum(), rtol=1e-5)
    g = c._graph
    assert g.disabled is None and g.captures == 1 and g.replays == 5 - graphs.WARMUP - 1


@needs_gpu
def test_gpu_graph_falls_back_with_a_warning(monkeypatch):
    """An op that reads a device value on the host cannot be captured: one warning,
    then the program runs op by op with the right results."""
    from fw.core.ir import TensorType, trace
    from fw.core.ir.executor import Compiled

    monkeypatch.setenv("FW_GPU_GRAPHS", "1")
    p = trace(lambda x: fw.nonzero(x > 0), [TensorType([6], "float32")])
    c = Compiled(p, "gpu")
    if c._graph is None:
        pytest.skip("nonzero is not captured at all here")
    import cupy

    x = np.array([1, -1, 2, 0, 3, -4], np.float32)
    with pytest.warns(RuntimeWarning, match="not replayed as a CUDA graph"):
        for _ in range(graphs.WARMUP + 2):
            (got,) = c([cupy.asarray(x)])
            np.testing.assert_array_equal(cupy.asnumpy(got).reshape(-1), [0, 2, 4])
    assert c._graph.disabled is not None


def test_capture_gemm_geometry():
    from fw.core.kernels.gpu.capture_blas import gemm_geometry

    assert gemm_geometry((5, 4, 3), (3, 2)) == ((5,), 4, 3, 2, True)
    assert gemm_geometry((2, 1, 4, 3), (5, 3, 6)) == ((2, 5), 4, 3, 6, False)
    with pytest.raises(NotImplementedError, match="1-D"):
        gemm_geometry((3,), (3, 2))
    with pytest.raises(ValueError, match="inner sizes"):
        gemm_geometry((4, 3), (2, 5))


@needs_gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_gpu_capture_blas_matches_cupy_matmul(dtype):
    """fw's own cuBLAS products (used while a graph is captured) equal CuPy's, for the
    shapes a train step has: 2-D, N-D @ weight, batched, broadcast batches."""
    import cupy

    from fw.core.kernels.gpu.capture_blas import CaptureBlas

    d = _dt.convert_dtype(dtype).np
    s = cupy.cuda.Stream(non_blocking=True)
    blas = CaptureBlas(cupy, s, cupy.empty(CaptureBlas.workspace_bytes(), cupy.uint8))
    rng = np.random.default_rng()
    shapes = [((7, 5), (5, 3)), ((2, 6, 5), (5, 4)), ((3, 2, 4, 5), (3, 2, 5, 6)),
              ((2, 1, 4, 5), (3, 5, 2)), ((4, 5), (3, 5, 2)), ((3, 0, 5), (5, 2))]
    tol = 1e-5 if d == np.float32 else 1e-12 if d == np.float64 else 2e-2
    try:
        for sa, sb in shapes:
            a = cupy.asarray(rng.standard_normal(sa).astype(np.float32)).astype(d)
            b = cupy.asarray(rng.standard_normal(sb).astype(np.float32)).astype(d)
            s.wait_event(cupy.cuda.get_current_stream().record())  # a, b are written
            with s:
                got = blas.matmul(a, b.T.copy().T if b.ndim == 2 else b)
            s.synchronize()
            want = cupy.matmul(a.astype(cupy.float64), b.astype(cupy.float64))
            assert got.shape == want.shape and got.dtype == d
            np.testing.assert_allclose(cupy.asnumpy(got.astype(cupy.float64)),
                                       cupy.asnumpy(want), rtol=tol, atol=tol,
                                       err_msg=f"{sa} @ {sb}")
    finally:
        blas.close()


@needs_gpu
def test_gpu_graph_per_input_shape(monkeypatch):
    """A program with a dynamic batch gets one graph per batch size (a last, smaller
    batch), each replayed with the right results."""
    from fw.core.ir import TensorType, trace
    from fw.core.ir.executor import Compiled

    monkeypatch.setenv("FW_GPU_GRAPHS", "1")
    p = trace(lambda x, y: fw.tanh(fw.matmul(x, y)) * 2.0,
              [TensorType([-1, 5], "float32"), TensorType([5, 3], "float32")])
    c = Compiled(p, "gpu")
    import cupy

    rng = np.random.default_rng()
    for rows in (8, 8, 8, 5, 8, 5, 8, 5):
        a = rng.standard_normal((rows, 5)).astype(np.float32)
        b = rng.standard_normal((5, 3)).astype(np.float32)
        (got,) = c([cupy.asarray(a), cupy.asarray(b)])
        np.testing.assert_allclose(cupy.asnumpy(got), np.tanh(a @ b) * 2, rtol=1e-5,
                                   atol=1e-6)
    g = c._graph
    assert g.disabled is None and g.captures == 2 and g.replays == 4


# ---------------------------------------------------------------- graphs, with a fake CuPy
class _Rec:
    """The fake stream capture: while `ops` is a list, device writes are recorded
    into it instead of run (as a CUDA stream capture records kernels)."""

    ops = None


class _Dev(np.ndarray):
    """A fake device array: a NumPy subclass whose writes a capture records."""

    def __setitem__(self, k, v):
        if _Rec.ops is not None:
            _Rec.ops.append(lambda: np.ndarray.__setitem__(self, k, v))
        else:
            np.ndarray.__setitem__(self, k, v)

    def get(self, stream=None):
        return np.array(self.view(np.ndarray))

    def set(self, host, stream=None):
        assert _Rec.ops is None, "a copy from the host inside a capture"
        np.ndarray.__setitem__(self, Ellipsis, host)


def _fake_cupy():
    import contextlib
    import types

    class Stream:
        ptr = 1

        def __init__(self, non_blocking=False):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

        def record(self, event=None):
            return object()

        def wait_event(self, ev):
            pass

        def synchronize(self):
            pass

        def begin_capture(self):
            _Rec.ops = []

        def end_capture(self):
            ops, _Rec.ops = _Rec.ops, None
            return types.SimpleNamespace(launch=lambda stream=None: [f() for f in ops])

    cuda = types.SimpleNamespace(
        Stream=Stream, MemoryPool=lambda: types.SimpleNamespace(malloc=None),
        using_allocator=lambda f: contextlib.nullcontext(),
        get_current_stream=lambda: Stream())
    return types.SimpleNamespace(
        ndarray=_Dev, cuda=cuda, uint8=np.uint8, matmul=np.matmul,
        empty=lambda n, dt: np.empty(n, dt).view(_Dev),
        empty_like=lambda a: np.empty_like(a).view(_Dev))


def _fd(a):
    return np.asarray(a).view(_Dev)


@pytest.fixture
def no_blas(monkeypatch):
    """No cuBLAS here: the capture's product handle is a stand-in (unused)."""
    from fw.core.kernels.gpu import capture_blas

    monkeypatch.setattr(capture_blas, "CaptureBlas", type(
        "NoBlas", (), {"__init__": lambda self, *a: None, "matmul": None,
                       "workspace_bytes": staticmethod(lambda: 8)}))


def test_graph_runner_logic_with_a_fake_cupy(no_blas):
    """Warm-up calls run the program; the next call runs it once more (its result is
    the call's) and captures it; later calls replay the capture on new inputs and host
    constants, bring the host state back, and hand out copies of the outputs; new input
    shapes get their own graph; a replaced parameter array makes it capture again."""
    runs = []

    def run(arrays, ps):  # y = x * w + lr; the host state b becomes b * 0.5
        x, (w, lr, b) = arrays[0], ps
        y, nb = _fd(np.empty(x.shape, np.float32)), _fd(np.empty(1, np.float64))
        runs.append(type(lr).__name__)

        def body():
            np.ndarray.__setitem__(y, Ellipsis, x * w + lr)
            np.ndarray.__setitem__(nb, Ellipsis, np.asarray(b).reshape(1) * 0.5)
        if _Rec.ops is not None:
            _Rec.ops.append(body)
        else:
            body()
        return (y, nb)

    g = graphs.GraphedProgram(run, _fake_cupy(), host_updates=lambda ps: [1],
                              move=lambda ps: [ps[0], _fd(ps[1]), ps[2]])
    w = _fd(np.float32([2.0, 3.0]))
    b = np.array([1.0])
    for i in range(7):
        lr = np.float32([0.1 * i])
        x = _fd(np.float32([i, i + 1]))
        y, nb = g([x], [w, lr, b])
        np.testing.assert_allclose(np.asarray(y), np.asarray(x) * [2, 3] + lr, rtol=1e-6)
        np.testing.assert_array_equal(np.asarray(nb), b * 0.5)
        assert type(nb) is np.ndarray or i < graphs.WARMUP + 1  # the host state, on the host
        b = np.asarray(nb).reshape(1)
    assert (g.captures, g.replays) == (1, 7 - graphs.WARMUP - 1)
    # warm-ups got the moved params (a device lr); capture and its first run the static ones
    assert runs[:graphs.WARMUP] == ["_Dev"] * graphs.WARMUP
    y2, _ = g([_fd(np.float32([1, 1, 1]).reshape(3, 1) * np.ones((3, 2), np.float32))],
              [w, np.float32([0.0]), b])
    assert y2.shape == (3, 2) and g.captures == 2  # new shapes: a graph of their own
    g([_fd(np.float32([1, 2]))], [w, np.float32([0.0]), b])
    assert g.captures == 2 and g.replays == 5  # the first graph again
    g([_fd(np.float32([1, 2]))], [_fd(np.float32([1.0, 1.0])), np.float32([0.0]), b])
    assert g.captures == 3  # a replaced parameter array: captured again


def test_graph_runner_gives_up_with_one_warning(no_blas):
    def run(arrays, ps):
        if _Rec.ops is not None:
            raise RuntimeError("the current stream is capturing, so H2D transfers are "
                               "disallowed")
        return (arrays[0] + 1,)

    g = graphs.GraphedProgram(run, _fake_cupy())
    x = _fd(np.float32([1.0]))
    for _ in range(graphs.WARMUP):
        g([x], [])
    with pytest.warns(RuntimeWarning, match="H2D transfers are disallowed; it runs op by op"):
        (y,) = g([x], [])
    assert g.disabled is not None and float(y[0]) == 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (y,) = g([x], [])  # no second warning
    assert float(y[0]) == 2.0
