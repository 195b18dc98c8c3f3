"""fw-inference: the Predictor on a 784-256-256-10 MLP (relu) at batch 1.

Target (2-core reference machine): handle to handle — ``copy_from_cpu`` + ``run`` +
``copy_to_cpu`` — <= 20 us (PyTorch 2.13 ``no_grad`` eager: 46 us, Paddle Inference
3.3: 78 us).

- ``time_handles``: the full handle-to-handle call;
- ``time_run``: ``run()`` alone (inputs already set);
- ``time_run_list``: Paddle 3's ``run([x])``;
- ``time_compiled``: fw-core's compiled program called directly (no predictor);
- ``time_numpy_floor``: the same three layers as bare NumPy calls (matmul, in-place
  bias add and relu): the floor for the NumPy reference kernels;
- ``Unfused``: the same with ``switch_ir_optim(False)`` (linear + relu ops);
- ``TorchPeer``: PyTorch eager under ``no_grad`` (when PyTorch is installed).

All run with one BLAS/oneDNN thread (``set_cpu_math_library_num_threads(1)``): at
batch 1 the products are matrix-vector products that a second thread slows down.
"""

import os
import tempfile

import numpy as np

import fw
import fw.inference as infer
from fw.core.ir import TensorType, save, trace
from fw.core.ops import call

SIZES = (784, 256, 256, 10)


def _mlp_file(directory, sizes=SIZES):
    """A saved linear+relu MLP of `sizes` (also bench_serving's model); returns the
    path and the weights."""
    rng = np.random.default_rng(0)
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        w = fw.to_tensor((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32))
        bias = fw.to_tensor(np.zeros(b, np.float32))
        for t, n in ((w, "weight"), (bias, "bias")):
            t.name, t.persistable, t.trainable = f"fc{i}.{n}", True, True
        layers.append((w, bias))

    def mlp(x):
        for i, (w, b) in enumerate(layers):
            x = call("linear", x, w, b)
            if i < len(layers) - 1:
                x = call("relu", x)
        return x

    path = os.path.join(directory, "mlp.fwmodel")
    save(trace(mlp, [TensorType([-1, sizes[0]], "float32")], ["x"]), path)
    return path, [(w.numpy(), b.numpy()) for w, b in layers]


class Predictor:
    ir_optim = True

    def setup(self):
        self.dir = tempfile.TemporaryDirectory()
        path, self.weights = _mlp_file(self.dir.name)
        config = infer.Config(path)
        config.switch_ir_optim(self.ir_optim)
        config.set_cpu_math_library_num_threads(1)
        self.pred = infer.create_predictor(config)
        self.x = np.random.default_rng(1).standard_normal((1, SIZES[0])).astype(np.float32)
        self.inp = self.pred.get_input_handle("x")
        self.out = self.pred.get_output_handle("output_0")
        self.inp.copy_from_cpu(self.x)
        self.compiled = self.pred._s.compiled

    def teardown(self):
        self.dir.cleanup()

    def time_handles(self):
        self.inp.copy_from_cpu(self.x)
        self.pred.run()
        self.out.copy_to_cpu()

    def time_run(self):
        self.pred.run()

    def time_run_list(self):
        self.pred.run([self.x])

    def time_compiled(self):
        self.compiled([self.x], None, False)

    def time_numpy_floor(self):
        h = self.x
        for i, (w, b) in enumerate(self.weights):
            h = np.matmul(h, w)
            h += b
            if i < len(self.weights) - 1:
                np.maximum(h, 0, out=h)


class Unfused(Predictor):
    ir_optim = False


class TorchPeer:
    def setup(self):
        try:
            import torch
        except ImportError:
            raise NotImplementedError("PyTorch is not installed") from None
        torch.set_num_threads(1)
        self.torch = torch
        self.model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                         torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                         torch.nn.Linear(256, 10)).eval()
        self.x = np.random.default_rng(1).standard_normal((1, 784)).astype(np.float32)

    def time_no_grad_numpy_to_numpy(self):
        with self.torch.no_grad():
            self.model(self.torch.from_numpy(self.x)).numpy()


# ---------------------------------------------------------------- per pass, with/without
# Every pass of the predictor's pipeline (PassBuilder, fw.inference.config) on every zoo
# model, with it and without it (all the other passes on): no pass may make a program
# slower. One oneDNN thread; small spatial sizes keep the suite short (the layers, and so
# the primitive kinds, are those of the full-size models).
_ZOO_CASES = {"lenet": (1, None), "resnet18": (1, 64), "mobilenet_v2": (1, 64),
              "bert_encoder": (1, None)}


def _zoo_predictor(directory, name, batch, hw, without=None, prepared=True, checks=False,
                   memory_optim=False):
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests"))
    import zoo

    fw.seed(0)
    model = zoo.build(fw, name)
    x = zoo.example_input(fw, name, batch=batch, hw=hw)
    prefix = os.path.join(directory, name)
    if not os.path.exists(prefix + ".fwmodel"):
        spec = [fw.static.InputSpec([None, *x.shape[1:]], x.dtype)]
        fw.jit.save(fw.jit.to_static(model, input_spec=spec), prefix)
    config = infer.Config(prefix)
    config.disable_glog_info()
    config.set_cpu_math_library_num_threads(1)
    if without is not None:
        config.pass_builder().delete_pass(without)
    config.switch_prepared_kernels(prepared)
    config.switch_nonfinite_checks(checks)
    config.enable_memory_optim(memory_optim)
    return infer.create_predictor(config), x.numpy()


def _pipeline_passes():
    return infer.Config().pass_builder().all_passes()


class PassWithWithout:
    params = (list(_ZOO_CASES), _pipeline_passes(), [True, False])
    param_names = ("model", "pass", "with_pass")

    def setup(self, model, name, with_pass):
        self.dir = tempfile.TemporaryDirectory()
        batch, hw = _ZOO_CASES[model]
        self.pred, self.x = _zoo_predictor(self.dir.name, model, batch, hw,
                                           None if with_pass else name)
        self.pred.run([self.x])  # primitives created, weights prepacked

    def teardown(self, model, name, with_pass):
        self.dir.cleanup()

    def time_run(self, model, name, with_pass):
        self.pred.run([self.x])


class PreparedWithWithout:
    """The predictor's steady path with and without its parts, on the zoo rows of
    asv_bench/deploy_side_by_side.py where per-op Python shows (LeNet at batch 1 and 64,
    MobileNetV2 and BERT at batch 1), one oneDNN thread: ``table`` (the op table's
    kernels, keyword attributes per call: ``switch_prepared_kernels(False)``),
    ``prepared-checked`` (prepared kernels, every fused op scanning for NaN/Inf:
    ``switch_nonfinite_checks(True)``) and ``prepared`` (the default: the inputs checked
    once per run instead; fw.core.kernels.cpu.prepared)."""

    params = (["lenet-b1", "lenet-b64", "mobilenet_v2-b1@64", "bert_encoder-b1"],
              ["table", "prepared-checked", "prepared"])
    param_names = ("model", "mode")

    def setup(self, model, mode):
        self.dir = tempfile.TemporaryDirectory()
        name, rest = model.split("-")
        batch, _, hw = rest[1:].partition("@")
        self.pred, self.x = _zoo_predictor(self.dir.name, name, int(batch),
                                           int(hw) if hw else None, prepared=mode != "table",
                                           checks=mode == "prepared-checked")
        self.pred.run([self.x])

    def teardown(self, model, mode):
        self.dir.cleanup()

    def time_run(self, model, mode):
        self.pred.run([self.x])


class MemoryOptimWithWithout:
    """``Config.enable_memory_optim()`` on and off (the zoo rows of
    asv_bench/deploy_side_by_side.py that move most, one oneDNN thread). On: each
    intermediate is freed at its last use and elementwise ops write into dead buffers,
    so a run touches fewer distinct buffers (MobileNetV2 b1@224: 9.0-9.6 against
    10.1-10.4 ms of CPU time, 2-core VM at load 23-27) and never leaves the whole
    run's intermediates for the allocator to return to the system at once."""

    params = (["mobilenet_v2-b1@224", "resnet18-b1@224", "bert_encoder-b8"], [False, True])
    param_names = ("model", "memory_optim")

    def setup(self, model, memory_optim):
        self.dir = tempfile.TemporaryDirectory()
        name, rest = model.split("-")
        batch, _, hw = rest[1:].partition("@")
        self.pred, self.x = _zoo_predictor(self.dir.name, name, int(batch),
                                           int(hw) if hw else None, memory_optim=memory_optim)
        self.pred.run([self.x])

    def teardown(self, model, memory_optim):
        self.dir.cleanup()

    def time_run(self, model, memory_optim):
        self.pred.run([self.x])

    def peakmem_run(self, model, memory_optim):
        self.pred.run([self.x])


class DepthwiseKernelWithWithout:
    """MobileNetV2's channel-last depthwise convolutions on oneDNN's jit_dw kernel (fw's
    choice, ``conv_set_prefer_jit_dw(True)``: fw-core csrc/nn_conv.cpp) and on oneDNN's
    first choice brdgmm_dw (False), one oneDNN thread: the whole predictor run, and the
    17 depthwise convolutions alone at their b1@224 shapes."""

    params = ([True, False],)
    param_names = ("jit_dw",)
    # (channels, spatial size, stride) of MobileNetV2's depthwise convolutions at 224
    SHAPES = [(32, 112, 1), (96, 112, 2), (144, 56, 1), (144, 56, 2), (192, 28, 1),
              (192, 28, 1), (192, 28, 2)] + [(384, 14, 1)] * 4 + [(576, 14, 1)] * 2 + \
        [(576, 14, 2)] + [(960, 7, 1)] * 3

    def setup(self, jit_dw):
        from fw.core import _native
        from fw.core.kernels.frozen import freeze

        if not _native.available:
            raise NotImplementedError("needs fw-core's native kernels")
        self.C = _native.C
        # the direct calls below run on the process's thread count (the predictor sets
        # its own per run): one thread, as the docstring says, also for them
        self.threads = _native.get_num_threads()
        _native.set_num_threads(1)
        self.C.conv_set_native_dw(False)  # oneDNN's kernels (NativeDepthwiseWithWithout: fw's)
        self.C.conv_set_prefer_jit_dw(jit_dw)
        self.C.nn_clear_cache()
        self.dir = tempfile.TemporaryDirectory()
        self.pred, self.x = _zoo_predictor(self.dir.name, "mobilenet_v2", 1, 224,
                                           memory_optim=True)
        rng = np.random.default_rng(0)
        self.dw = []
        for c, hw, s in self.SHAPES:
            x = rng.standard_normal((1, hw, hw, c)).astype(np.float32)
            w = rng.standard_normal((c, 1, 3, 3)).astype(np.float32)
            out = np.empty((1, hw // s, hw // s, c), np.float32)
            # frozen weights, as a predictor's: packed for the primitive once
            self.dw.append((x, w, out, None, None, "relu6", (s, s), (1, 1), (1, 1), (1, 1),
                            c, True, freeze(w)))
        self.pred.run([self.x])
        self.time_depthwise(jit_dw)

    def teardown(self, jit_dw):
        from fw.core import _native

        self.C.conv_set_prefer_jit_dw(True)
        self.C.conv_set_native_dw(True)
        self.C.nn_clear_cache()
        _native.set_num_threads(self.threads)
        self.dir.cleanup()

    def time_run(self, jit_dw):
        self.pred.run([self.x])

    def time_depthwise(self, jit_dw):
        conv = self.C.conv_forward
        for args in self.dw:
            conv(*args)


class NativeDepthwiseWithWithout(DepthwiseKernelWithWithout):
    """MobileNetV2's channel-last depthwise convolutions on fw's own kernel (fw-core
    csrc/nn_dwconv.cpp, ``conv_set_native_dw(True)``, the default) and on oneDNN's
    jit_dw (False), one thread: the whole predictor run (b1@224, memory optim on) and the
    17 depthwise convolutions alone at their b1@224 shapes (hot inputs)."""

    params = ([True, False],)
    param_names = ("native_dw",)

    def setup(self, native_dw):
        super().setup(True)
        self.C.conv_set_native_dw(native_dw)
        self.pred.run([self.x])

    def teardown(self, native_dw):
        super().teardown(True)

    def time_run(self, native_dw):
        self.pred.run([self.x])

    def time_depthwise(self, native_dw):
        conv = self.C.conv_forward
        for args in self.dw:
            conv(*args)


class ConvPlanWithWithout:
    """The prepared convolutions calling a bound ``C.ConvPlan`` (geometry, attributes
    and activation converted once per op and input shape: ``prepared.USE_CONV_PLAN``,
    the default) or ``C.conv_forward`` with its 13 arguments per call: MobileNetV2 b1 at
    64x64 (52 convolutions, where per-call costs show) and at 224, LeNet b1; one thread."""

    params = (["mobilenet_v2-b1@64", "mobilenet_v2-b1@224", "lenet-b1"], [True, False])
    param_names = ("model", "conv_plan")

    def setup(self, model, conv_plan):
        from fw.core.kernels.cpu import prepared

        self.prepared = prepared
        prepared.USE_CONV_PLAN = conv_plan  # read when the predictor's kernels are made
        self.dir = tempfile.TemporaryDirectory()
        name, rest = model.split("-")
        batch, _, hw = rest[1:].partition("@")
        try:
            self.pred, self.x = _zoo_predictor(self.dir.name, name, int(batch),
                                               int(hw) if hw else None, memory_optim=True)
        finally:
            prepared.USE_CONV_PLAN = True
        self.pred.run([self.x])

    def teardown(self, model, conv_plan):
        self.dir.cleanup()

    def time_run(self, model, conv_plan):
        self.pred.run([self.x])


def _attention_operands(batch, seq=128, heads=4, dh=64):
    rng = np.random.default_rng(0)
    d = heads * dh
    qkv = rng.standard_normal((batch, seq, 3 * d)).astype(np.float32)
    return (qkv[..., :d], qkv[..., d:2 * d], qkv[..., 2 * d:]), heads


def _unfused_attention(q, k, v, heads):
    """The chain a predictor ran without ``fuse_attention``, as the same kernels: the
    head views, the scores product, softmax into a new buffer, the context product and
    the copy of its transpose back to ``[B, S, D]``."""
    from fw.core.ops import OPS

    b, s, d = q.shape
    mm, sm = OPS["matmul"].kernels["cpu"], OPS["softmax"].kernels["cpu"]

    def heads_of(x):
        return x.reshape(b, s, heads, d // heads).transpose(0, 2, 1, 3)

    p = sm(mm(heads_of(q), heads_of(k), transpose_x=False, transpose_y=True), axis=-1)
    o = mm(p, heads_of(v), transpose_x=False, transpose_y=False)
    return o.transpose(0, 2, 1, 3).reshape(b, s, d)


class AttentionKernelWithWithout:
    """One BERT-style attention (4 heads of 64, seq 128, q/k/v the views of one packed
    projection) as the ``fused_attention`` kernel (fw.core.kernels.cpu.attention) and
    as the unfused chain's kernels, one oneDNN thread. The predictor-level figure is
    ``PassWithWithout`` with ``fuse_attention``."""

    params = ([1, 8], [True, False])
    param_names = ("batch", "fused")

    def setup(self, batch, fused):
        from fw.core import _native
        from fw.core.ops import OPS

        _native.set_num_threads(1)
        (self.q, self.k, self.v), self.heads = _attention_operands(batch)
        kernel = OPS["fused_attention"].kernels["cpu"]
        h = self.heads
        self.fn = (lambda q, k, v: kernel(q, k, v, None, h, 1.0)) if fused else \
            (lambda q, k, v: _unfused_attention(q, k, v, h))
        self.fn(self.q, self.k, self.v)

    def time_attention(self, batch, fused):
        self.fn(self.q, self.k, self.v)


class OneRowProductWithWithout:
    """MobileNetV2's batch-1 classifier (1 x 1280 @ 1280 x 1000 + bias) as the
    prepared fused_matmul's unchecked path runs it (NumPy's GEMV) and as the table
    kernel runs it (oneDNN's matmul), hot and with the weight evicted from the caches
    (a 64 MB buffer touched first, as between two runs of the whole network)."""

    params = (["gemv", "table"], [False, True])
    param_names = ("kernel", "cold")

    def setup(self, kernel, cold):
        from fw.core import _native
        from fw.core.ir.passes import PassManager
        from fw.core.kernels.cpu.prepared import prepare

        _native.set_num_threads(1)
        rng = np.random.default_rng(0)
        w = fw.to_tensor(rng.standard_normal((1280, 1000)).astype(np.float32))
        b = fw.to_tensor(rng.standard_normal(1000).astype(np.float32))
        for t in (w, b):
            t.persistable = True
        p = trace(lambda x: call("linear", x, w, b), [TensorType([-1, 1280], "float32")], ["x"])
        PassManager(["fuse_matmul_bias_act"]).run(p)
        (op,) = [o for o in p.walk() if o.name == "fused_matmul"]
        table = op.opdef.kernels["cpu"]
        attrs = dict(op.attrs)
        fn = prepare(op, table, checked=False) if kernel == "gemv" else \
            (lambda x, y, bias: table(x, y, bias, None, **attrs))
        self.args = (rng.standard_normal((1, 1280)).astype(np.float32), w.numpy(), b.numpy())
        self.fn = fn
        self.evict = np.zeros(16 << 20, np.float32) if cold else None
        fn(*self.args)

    def time_product(self, kernel, cold):
        if self.evict is not None:
            self.evict[::16] += 1.0
        self.fn(*self.args)
