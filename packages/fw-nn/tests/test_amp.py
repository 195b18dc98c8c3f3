"""fw.amp: auto_cast per op list and level, decorate, and GradScaler's dynamic loss
scaling."""

import numpy as np
import pytest

import fw
import fw.nn.functional as F
from fw.core import dispatch


def x32(*shape, seed=0):
    return fw.to_tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def test_o1_white_ops_go_low_black_ops_go_float32():
    lin = fw.nn.Linear(4, 4)
    with fw.amp.auto_cast(dtype="bfloat16"):
        y = lin(x32(2, 4))
        assert y.dtype == fw.bfloat16  # linear is white
        assert F.softmax(y).dtype == fw.float32  # softmax is black
        assert F.linear(x32(2, 3), x32(3, 2)).dtype == fw.bfloat16
        assert F.gelu(x32(2, 2)).dtype == fw.float32  # gray: follows its input
        assert (y.astype("float32") + y).dtype == fw.float32  # mixed inputs promote
    assert not dispatch.amp_state.enabled
    assert lin(x32(2, 4)).dtype == fw.float32


def test_o2_everything_low_except_black():
    with fw.amp.auto_cast(level="O2", dtype="bfloat16"):
        assert F.gelu(x32(2, 2)).dtype == fw.bfloat16
        assert F.layer_norm(x32(2, 4), [4]).dtype == fw.float32
        assert fw.sum(x32(3)).dtype == fw.float32


def test_custom_lists_and_float16():
    with fw.amp.auto_cast(dtype="float16", custom_black_list=["linear"],
                          custom_white_list=["gelu"]):
        assert F.linear(x32(2, 3), x32(3, 2)).dtype == fw.float32
        assert F.gelu(x32(2, 2)).dtype == fw.float16
    with fw.amp.auto_cast(dtype="float16"):
        assert F.linear(x32(2, 3), x32(3, 2)).dtype == fw.float16


def test_disabled_and_nested_regions_and_decorator():
    with fw.amp.auto_cast(dtype="bfloat16"):
        with fw.amp.auto_cast(enable=False):
            assert F.linear(x32(2, 3), x32(3, 2)).dtype == fw.float32
        assert F.linear(x32(2, 3), x32(3, 2)).dtype == fw.bfloat16

    @fw.amp.auto_cast(dtype="bfloat16")
    def f(a, b):
        return F.linear(a, b)

    assert f(x32(2, 3), x32(3, 2)).dtype == fw.bfloat16
    assert not dispatch.amp_state.enabled
    with pytest.raises(ValueError, match="'level'"):
        fw.amp.auto_cast(level="O3")
    with pytest.raises(ValueError, match="'dtype'"):
        fw.amp.auto_cast(dtype="int8")


def test_gradients_reach_float32_parameters_and_casts_are_reused():
    lin = fw.nn.Linear(4, 3)
    with fw.amp.auto_cast(dtype="bfloat16") as ac:
        y = lin(x32(5, 4)) + lin(x32(5, 4, seed=1))
        cached = len(ac._state.cache)
    assert cached == 2  # weight and bias cast once each for both calls
    y.astype("float32").sum().backward()
    assert lin.weight.grad.dtype == fw.float32
    np.testing.assert_allclose(lin.bias.grad.numpy(), 10.0, rtol=1e-2)


def test_decorate_o2_keeps_norm_layers_float32_and_enables_master_weights():
    net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.LayerNorm(8), fw.nn.Linear(8, 2))
    opt = fw.optimizer.Adam(0.01, parameters=net.parameters())
    net, opt = fw.amp.decorate(net, opt, level="O2", dtype="bfloat16", save_dtype="float32")
    assert net[0].weight.dtype == fw.bfloat16 and net[2].bias.dtype == fw.bfloat16
    assert net[1].weight.dtype == fw.float32
    assert opt._multi_precision
    assert all(v.dtype == fw.float32 for v in net.state_dict().values())
    x = x32(16, 4)
    y = fw.to_tensor(np.random.default_rng(1).integers(0, 2, 16))
    losses = []
    for _ in range(15):
        with fw.amp.auto_cast(level="O2", dtype="bfloat16"):
            loss = F.cross_entropy(net(x).astype("float32"), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert "master_weights" in opt.state_dict()


def test_support_queries():
    assert fw.amp.is_bfloat16_supported() and fw.amp.is_float16_supported()


# ---------------------------------------------------------------- GradScaler
def _setup(scale=1024.0, **kw):
    p = fw.nn.Parameter(np.ones(3, np.float32))
    opt = fw.optimizer.SGD(0.1, parameters=[p])
    return p, opt, fw.amp.GradScaler(init_loss_scaling=scale, **kw)


def test_scale_unscale_and_step():
    p, opt, sc = _setup(8.0)
    loss = (p * p).sum()
    sc.scale(loss).backward()
    np.testing.assert_allclose(p.grad.numpy(), 16.0)  # 2 * p * 8
    sc.unscale_(opt)
    np.testing.assert_allclose(p.grad.numpy(), 2.0)
    with pytest.raises(RuntimeError, match="already called"):
        sc.unscale_(opt)
    sc.step(opt)
    sc.update()
    np.testing.assert_allclose(p.numpy(), 1.0 - 0.2)


def test_inf_skips_the_step_and_shrinks_the_scale():
    p, opt, sc = _setup(1024.0, decr_every_n_nan_or_inf=2, decr_ratio=0.5)
    for _ in range(2):
        p.grad = fw.to_tensor(np.array([np.inf, 1.0, 1.0], np.float32))
        sc.minimize(opt, None)
        np.testing.assert_allclose(p.numpy(), 1.0)  # skipped
    assert sc.get_loss_scaling() == 512.0  # halved after the second bad step


def test_scale_grows_after_good_steps_and_state_round_trips():
    p, opt, sc = _setup(4.0, incr_every_n_steps=3, incr_ratio=2.0)
    for _ in range(3):
        p.grad = fw.ones([3]) * sc.get_loss_scaling()
        sc.step(opt)
        sc.update()
    assert sc.get_loss_scaling() == 8.0
    np.testing.assert_allclose(p.numpy(), 1.0 - 3 * 0.1, rtol=1e-6)
    sd = sc.state_dict()
    sc2 = fw.amp.GradScaler()
    sc2.load_state_dict(sd)
    assert sc2.get_loss_scaling() == 8.0 and sc2.state_dict() == sd


def test_static_scaling_and_disabled_scaler():
    p, opt, sc = _setup(16.0, use_dynamic_loss_scaling=False)
    p.grad = fw.to_tensor(np.array([np.nan, 0, 0], np.float32))
    sc.step(opt)
    sc.update()
    assert sc.get_loss_scaling() == 16.0
    p, opt, off = _setup(enable=False)
    loss = p.sum()
    assert off.scale(loss) is loss and off.state_dict() == {}
    loss.backward()
    off.step(opt)
    np.testing.assert_allclose(p.numpy(), 0.9)
