"""``layout_nhwc``: consecutive convolutions, pools and the elementwise ops between them
run channel-last, with one transpose in at the region's entry and one out at its exit,
and the program computes what it computed before."""

import numpy as np

import fw
from fw.core.ir import TensorType, run, trace, verify
from fw.core.ir.passes import PassManager, get_pass
from fw.core.ops import call
from fw.core.testing import as_tuple

T = TensorType
F32 = np.float32


def _param(rng, shape, name):
    t = fw.to_tensor((rng.standard_normal(shape) * 0.3).astype(F32))
    t.name, t.persistable, t.trainable = name, True, True
    return t


def _convnet(rng, c_in=8):
    w1, w2 = _param(rng, (8, c_in, 3, 3), "c1.w"), _param(rng, (8, 8, 3, 3), "c2.w")
    wd, b = _param(rng, (8, 1, 3, 3), "dw.w"), _param(rng, (8,), "b")

    def f(x):
        h = call("relu", call("conv", x, w1, b, padding=1))
        h = call("max_pool", h, kernel_size=2, stride=2)
        r = h
        h = call("relu6", call("conv", h, wd, None, padding=1, groups=8))
        h = call("conv", h, w2, b, padding=1) + r  # residual add between two regions
        h = call("relu", h)
        h = call("adaptive_avg_pool", h, output_size=1)
        return h.reshape([-1, 8])

    return trace(f, [T([-1, c_in, 8, 8], "float32")], ["x"])


def _names(p):
    return [op.name for op in p.walk()]


def _out(p, x):
    return [o.numpy() for o in as_tuple(run(p, fw.to_tensor(x)))]


def test_a_conv_chain_converts_only_at_its_edges():
    rng = np.random.default_rng(0)
    p = _convnet(rng)
    q = p.clone()
    assert PassManager(["layout_nhwc", "dce"]).run(q)
    verify(q)
    names = _names(q)
    # one transpose into NHWC before the first conv, one out after the last pool
    assert names.count("transpose") == 2, str(q)
    assert names[0] == "transpose" and names.index("transpose", 1) == len(names) - 2
    for op in q.walk():
        if op.name in ("conv", "max_pool", "adaptive_avg_pool"):
            assert op.attrs["channel_last"]
    x = rng.standard_normal((2, 8, 8, 8)).astype(F32)
    for a, b in zip(_out(p, x), _out(q, x)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


def test_the_whole_inference_pipeline_keeps_the_values():
    rng = np.random.default_rng(1)
    p = _convnet(rng)
    q = p.clone()
    PassManager("inference").run(q)
    names = _names(q)
    assert names.count("transpose") == 2 and "fused_conv" in names, str(q)
    x = rng.standard_normal((1, 8, 8, 8)).astype(F32)
    for a, b in zip(_out(p, x), _out(q, x)):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def test_min_channels_keeps_a_narrow_stem_channel_first():
    rng = np.random.default_rng(2)
    p = _convnet(rng, c_in=3)
    q = p.clone()
    assert PassManager([get_pass("layout_nhwc", min_channels=4, min_convs=1), "dce"]).run(q)
    first_conv = next(op for op in q.walk() if op.name == "conv")
    assert not first_conv.attrs["channel_last"]
    assert _names(q).count("transpose") == 2  # after the stem, and at the exit
    x = rng.standard_normal((1, 3, 8, 8)).astype(F32)
    for a, b in zip(_out(p, x), _out(q, x)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


def test_too_few_convolutions_leave_the_program_alone():
    # min_convs (default 2: LeNet's two convs convert) leaves programs with fewer alone
    rng = np.random.default_rng(4)
    w1, w2 = _param(rng, (6, 1, 5, 5), "c1.w"), _param(rng, (16, 6, 5, 5), "c2.w")

    def lenet_features(x):
        h = call("max_pool", call("relu", call("conv", x, w1, None)), kernel_size=2)
        return call("max_pool", call("relu", call("conv", h, w2, None)), kernel_size=2)

    p = trace(lenet_features, [T([-1, 1, 28, 28], "float32")], ["x"])
    before = str(p)
    assert not PassManager([get_pass("layout_nhwc", min_convs=3)]).run(p)
    assert str(p) == before
    assert PassManager(["layout_nhwc"]).run(p)


def test_nothing_to_do_leaves_the_program_alone():
    rng = np.random.default_rng(3)
    w = _param(rng, (4, 4), "w")
    p = trace(lambda x: call("relu", x @ w), [T([-1, 4], "float32")], ["x"])
    before = str(p)
    assert not PassManager(["layout_nhwc"]).run(p)
    assert str(p) == before
