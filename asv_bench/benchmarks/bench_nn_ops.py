"""fw-core's native nn kernels (fw.core.kernels.cpu: conv, pool, norm, activation and
nn_grad: oneDNN convolution, normalization and softmax, own C++ pooling) against the
ops' NumPy references, float32, per call on preallocated inputs (the op kernels
themselves, without dispatch or autograd).

Shapes: the two convolutions of LeNet (batch 64), a ResNet-style 3x3 convolution, the
pooling layers that follow them, the layer norm and attention softmax of a small
Transformer (batch 16, 4 heads, 64 positions, d=128), a batch norm. `impl` "numpy" is
the op's reference, i.e. what fw computed before these kernels (and computes with
FW_DISABLE_NATIVE=1).

The convolutions reorder their plain weights into oneDNN's blocked layout on every call
(weights change every training step, and a kernel sees arrays, not version counters).
Measured with ONEDNN_VERBOSE=1 on the reference machine, one thread: negligible for
LeNet's layers and for the batch-8 ResNet layer here (< 1%), about 6% of a batch-1
256-channel 3x3 convolution on 14x14 (0.27 of 4.5 ms), the worst case for inference.

Measured on the 2-core reference machine (one thread, shared machine, best of runs):
every native kernel beats the reference at every size (5-15 us per call for tiny
problems, where NumPy's multi-call references take 25-100 us), which is why
these kernels have no size threshold.
"""

import numpy as np

from fw.core import _native
from fw.core.ops import OPS

CONV = {  # x shape, weight shape, padding
    "lenet1": ((64, 1, 28, 28), (6, 1, 5, 5), 2),
    "lenet2": ((64, 6, 14, 14), (16, 6, 5, 5), 0),
    "resnet3x3": ((8, 64, 28, 28), (64, 64, 3, 3), 1),
}
POOL = {"lenet1": (64, 6, 28, 28), "lenet2": (64, 16, 10, 10), "resnet": (8, 64, 56, 56)}
IMPLS = ["native", "numpy"]


def _kernel(name, impl):
    """The op's kernel taking its attributes as fw passes them (canonical form)."""
    op = OPS[name]
    if impl == "numpy":
        fn = op.reference
    elif not _native.available:
        raise NotImplementedError("FW_DISABLE_NATIVE=1")  # asv skips the benchmark
    else:
        fn = op.kernels["cpu"]

    def call(*args, **attrs):
        return fn(*args, **attrs)

    call.attrs = lambda **attrs: op.canon(dict(op.attrs, **attrs)) if op.canon else \
        dict(op.attrs, **attrs)
    return call


def _rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


class Conv:
    params = [list(CONV), IMPLS]
    param_names = ["case", "impl"]

    def setup(self, case, impl):
        xs, ws, pad = CONV[case]
        self.x, self.w = _rand(xs), _rand(ws, 1)
        self.b = _rand(ws[:1], 2)
        self.pad = pad
        self.conv = _kernel("conv", impl)
        self.convt = _kernel("conv_transpose", impl)
        self.cgw = _kernel("conv_grad_weight", impl)
        self.a_conv = self.conv.attrs(padding=pad)
        self.a_convt = self.convt.attrs(padding=pad, output_size=list(xs[2:]))
        self.a_cgw = self.cgw.attrs(padding=pad, kernel_size=list(ws[2:]))
        self.y = OPS["conv"].reference(self.x, self.w, self.b, **self.a_conv)
        self.time_forward(case, impl)  # creates the cached primitives
        self.time_backward_data(case, impl)
        self.time_backward_weights(case, impl)

    def time_forward(self, case, impl):
        self.conv(self.x, self.w, self.b, **self.a_conv)

    def time_backward_data(self, case, impl):
        self.convt(self.y, self.w, None, **self.a_convt)

    def time_backward_weights(self, case, impl):
        self.cgw(self.x, self.y, **self.a_cgw)


class Pool:
    params = [list(POOL), IMPLS]
    param_names = ["case", "impl"]

    def setup(self, case, impl):
        self.x = _rand(POOL[case])
        self.maxp = _kernel("max_pool_with_index", impl)
        self.avgp = _kernel("avg_pool", impl)
        self.mpg = _kernel("max_pool_grad", impl)
        self.attrs = self.maxp.attrs(kernel_size=2, stride=2)
        self.a_avg = self.avgp.attrs(kernel_size=2, stride=2)
        out, self.mask = OPS["max_pool_with_index"].reference(self.x, **self.attrs)
        self.g = _rand(out.shape, 1)
        self.a_grad = self.mpg.attrs(input_size=list(self.x.shape[2:]))
        self.maxp(self.x, **self.attrs)

    def time_max_pool_with_index(self, case, impl):
        self.maxp(self.x, **self.attrs)

    def time_avg_pool(self, case, impl):
        self.avgp(self.x, **self.a_avg)

    def time_max_pool_grad(self, case, impl):
        self.mpg(self.g, self.mask, **self.a_grad)


class PoolInference:
    """The pools a predictor runs: max pool without indices, channel-last (what the
    layout_nhwc pass makes of LeNet's 2x2 pools: the SSE fast path) and channel-first,
    and the global adaptive average pool ending MobileNetV2 (7x7x1280, channel-last)."""

    params = [["lenet1", "lenet2"], ["channel_last", "channel_first"], IMPLS]
    param_names = ["case", "layout", "impl"]

    def setup(self, case, layout, impl):
        x = _rand(POOL[case])
        cl = layout == "channel_last"
        self.x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)) if cl else x
        self.maxp = _kernel("max_pool", impl)
        self.attrs = self.maxp.attrs(kernel_size=2, stride=2, channel_last=cl)
        self.gap = _kernel("adaptive_avg_pool", impl)
        self.feat = _rand((1, 7, 7, 1280) if cl else (1, 1280, 7, 7))
        self.a_gap = self.gap.attrs(output_size=1, channel_last=cl)
        self.maxp(self.x, **self.attrs)

    def time_max_pool(self, case, layout, impl):
        self.maxp(self.x, **self.attrs)

    def time_global_avg_pool(self, case, layout, impl):
        self.gap(self.feat, **self.a_gap)


class Norm:
    params = [IMPLS]
    param_names = ["impl"]

    def setup(self, impl):
        self.bn_x = _rand((64, 16, 10, 10))
        c = 16
        self.rm, self.rv = np.zeros(c, np.float32), np.ones(c, np.float32)
        self.w, self.b = _rand((c,), 1), _rand((c,), 2)
        self.bn = _kernel("batch_norm", impl)
        self.bng = _kernel("batch_norm_grad", impl)
        self.a_bn, self.a_bng = self.bn.attrs(training=True), self.bng.attrs()
        outs = OPS["batch_norm"].reference(self.bn_x, self.rm, self.rv, self.w, self.b,
                                           **self.a_bn)
        self.bn_stats = outs[3:]
        self.ln_x = _rand((16, 64, 128))
        self.lw, self.lb = _rand((128,), 3), _rand((128,), 4)
        self.ln = _kernel("layer_norm", impl)
        self.lng = _kernel("layer_norm_grad", impl)
        self.a_ln = self.ln.attrs(begin_norm_axis=2)
        self.a_lng = self.lng.attrs(begin_norm_axis=2)
        _, self.ln_mean, self.ln_inv = OPS["layer_norm"].reference(
            self.ln_x, self.lw, self.lb, **self.a_ln)
        self.g_bn, self.g_ln = _rand(self.bn_x.shape, 5), _rand(self.ln_x.shape, 6)
        self.time_batch_norm_train(impl)
        self.time_layer_norm(impl)

    def time_batch_norm_train(self, impl):
        self.bn(self.bn_x, self.rm, self.rv, self.w, self.b, **self.a_bn)

    def time_batch_norm_grad(self, impl):
        self.bng(self.bn_x, self.w, *self.bn_stats, self.g_bn, **self.a_bng)

    def time_layer_norm(self, impl):
        self.ln(self.ln_x, self.lw, self.lb, **self.a_ln)

    def time_layer_norm_grad(self, impl):
        self.lng(self.ln_x, self.lw, self.ln_mean, self.ln_inv, self.g_ln, **self.a_lng)


class Softmax:
    params = [["attention", "logits"], IMPLS]
    param_names = ["case", "impl"]

    def setup(self, case, impl):
        shape = (16, 4, 64, 64) if case == "attention" else (64, 10)
        self.x, self.g = _rand(shape), _rand(shape, 1)
        self.y = OPS["softmax"].reference(self.x, axis=-1)
        self.sm = _kernel("softmax", impl)
        self.smg = _kernel("softmax_grad", impl)
        self.sm(self.x, axis=-1)

    def time_softmax(self, case, impl):
        self.sm(self.x, axis=-1)

    def time_softmax_grad(self, case, impl):
        self.smg(self.y, self.g, axis=-1)
