"""Training on a device (`fw.core.testing.device`: CuPy and an NVIDIA GPU with
FW_TEST_DEVICE=gpu, else the 'fake' device): a model moved there trains to the same
parameters as on the cpu, to_static on the device equals eager on it, state moves
between devices, and, on a real GPU, the memory counters, streams, events, AMP and
zero-copy exchange with other CUDA libraries work."""

import copy
import os
import sys

import numpy as np
import pytest

import fw
from fw.core.testing import device as _dev

P = _dev.place()
GPU = _dev.is_real_gpu()
needs_gpu = pytest.mark.skipif(not GPU, reason="needs FW_TEST_DEVICE=gpu (CuPy and a GPU)")


def _mlp():
    fw.seed(0)
    return fw.nn.Sequential(fw.nn.Linear(12, 16), fw.nn.ReLU(), fw.nn.Linear(16, 16),
                            fw.nn.GELU(), fw.nn.LayerNorm(16), fw.nn.Linear(16, 3))


def _lenet():
    fw.seed(0)
    nn = fw.nn
    # no conv bias before BatchNorm: its gradient is rounding noise that Adam amplifies
    return nn.Sequential(nn.Conv2D(1, 4, 3, padding=1, bias_attr=False), nn.BatchNorm2D(4),
                         nn.ReLU(),
                         nn.MaxPool2D(2, 2), nn.Conv2D(4, 8, 3), nn.ReLU(),
                         nn.AdaptiveAvgPool2D(1), nn.Flatten(), nn.Linear(8, 3))


def _data(shape, n=3, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape).astype(np.float32),
            rng.integers(0, n, shape[0]).astype(np.int64))


def _train(model, x, y, place, steps=4, opt="adam", static=False):
    model = model.to(device=place)
    params = model.parameters()
    o = (fw.optimizer.Adam(1e-2, parameters=params) if opt == "adam" else
         fw.optimizer.Momentum(1e-2, 0.9, parameters=params, weight_decay=1e-3))
    xt, yt = fw.to_tensor(x, place=place), fw.to_tensor(y, place=place)

    def step(a, b):
        loss = fw.nn.functional.cross_entropy(model(a), b)
        loss.backward()
        o.step()
        o.clear_grad()
        return loss

    if static:
        step = fw.jit.to_static(step)
    losses = [float(step(xt, yt)) for _ in range(steps)]
    return losses, model


@pytest.mark.parametrize("make,shape", [(_mlp, (8, 12)), (_lenet, (4, 1, 8, 8))],
                         ids=["mlp", "conv-bn-pool"])
@pytest.mark.parametrize("opt", ["adam", "momentum"])
def test_training_on_the_device_matches_cpu(make, shape, opt):
    x, y = _data(shape)
    lc, mc = _train(make(), x, y, "cpu", opt=opt)
    ld, md = _train(make(), x, y, P, opt=opt)
    for p in md.parameters():
        assert p.place == P, f"{p.name} left the device"
    np.testing.assert_allclose(ld, lc, rtol=2e-5, atol=1e-6)
    for (n, a), (_, b) in zip(mc.state_dict().items(), md.state_dict().items()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-4, atol=1e-5, err_msg=n)
    assert lc[-1] < lc[0]


def test_to_static_on_the_device_matches_eager_on_it():
    x, y = _data((8, 12))
    le, _ = _train(_mlp(), x, y, P)
    ls, ms = _train(_mlp(), x, y, P, static=True)
    np.testing.assert_allclose(ls, le, rtol=2e-5, atol=1e-6)
    assert all(p.place == P for p in ms.parameters())


def test_transformer_layer_gradients_on_the_device_match_cpu():
    fw.seed(0)
    layer = fw.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0)
    twin = copy.deepcopy(layer).to(device=P)
    x = np.random.default_rng(1).standard_normal((2, 5, 16)).astype(np.float32)
    mask = np.triu(np.full((5, 5), -1e9, np.float32), 1)
    outs = []
    for m, p in ((layer, "cpu"), (twin, P)):
        out = m(fw.to_tensor(x, place=p), src_mask=fw.to_tensor(mask, place=p))
        (out * out).mean().backward()
        outs.append((out.numpy(), {q.name: q.grad.numpy() for q in m.parameters()},
                     {q.grad.place for q in m.parameters()}))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-4, atol=1e-5)
    assert outs[1][2] == {P}
    for (k, a), b in zip(outs[0][1].items(), outs[1][1].values()):
        np.testing.assert_allclose(b, a, rtol=1e-3, atol=1e-5, err_msg=k)


def test_state_moves_between_devices_and_files(tmp_path):
    m = _mlp().to(device=P)
    path = str(tmp_path / "m.pdparams")
    fw.save(m.state_dict(), path)
    back = _mlp()
    for p in back.parameters():
        p.set_value(fw.zeros_like(p))
    back.set_state_dict(fw.load(path))
    for (n, a), (_, b) in zip(m.state_dict().items(), back.state_dict().items()):
        assert b.place.is_cpu_place()
        np.testing.assert_array_equal(b.numpy(), a.numpy(), err_msg=n)
    t = fw.to_tensor([1.5, -2.0], place=P)
    assert t.cpu().place.is_cpu_place() and t.cpu().to(P).place == P
    assert t.cpu().tolist() == [1.5, -2.0]


# ---------------------------------------------------------------- a real GPU only
@needs_gpu
def test_memory_counters_follow_allocations():
    cuda = fw.device.cuda
    cuda.empty_cache()
    base = cuda.memory_allocated()
    with _dev.on():
        t = fw.zeros([1024, 1024], dtype="float32")  # 4 MiB on the current device
    assert t.place.is_gpu_place()
    assert cuda.memory_allocated() - base >= 4 * 2**20
    assert cuda.max_memory_allocated() >= cuda.memory_allocated()
    assert cuda.memory_reserved() >= cuda.memory_allocated()
    peak = cuda.max_memory_allocated()
    del t
    assert cuda.memory_allocated() - base < 4 * 2**20
    assert cuda.max_memory_allocated() == peak
    cuda.reset_max_memory_allocated()
    assert cuda.max_memory_allocated() < peak
    cuda.empty_cache()
    assert cuda.memory_reserved() <= peak


@needs_gpu
def test_streams_and_events_order_work():
    s = fw.device.Stream()
    start, end = fw.device.Event(enable_timing=True), fw.device.Event(enable_timing=True)
    with fw.device.stream_guard(s), _dev.on():
        start.record(s)
        a = fw.randn([2048, 2048])
        for _ in range(5):
            a = fw.matmul(a, a) * 1e-3
        end.record(s)
    end.synchronize()
    assert end.query() and s.query()
    assert start.elapsed_time(end) > 0
    assert fw.device.current_stream() != s
    np.testing.assert_array_equal(np.isfinite(a.numpy()), True)


@needs_gpu
def test_device_queries():
    cuda = fw.device.cuda
    assert cuda.device_count() >= 1 and fw.is_compiled_with_cuda()
    assert "gpu" in fw.device.get_all_device_type()
    props = cuda.get_device_properties()
    assert props.total_memory > 2**30 and props.multi_processor_count > 0
    assert cuda.get_device_capability() == (props.major, props.minor)
    assert cuda.get_device_name() == props.name


@needs_gpu
def test_zero_copy_exchange_with_cupy_and_torch():
    import cupy

    t = fw.arange(6, dtype="float32").cuda().reshape([2, 3])
    assert t.place.is_gpu_place()
    c = cupy.from_dlpack(t)  # the protocol: Tensor.__dlpack__
    c[0, 0] = 42.0
    assert float(t[0, 0]) == 42.0  # shares memory
    assert cupy.asarray(t).data.ptr == c.data.ptr  # __cuda_array_interface__
    u = fw.utils.dlpack.from_dlpack(c)
    assert u.place.is_gpu_place() and u.numpy().tolist() == t.numpy().tolist()
    torch = pytest.importorskip("torch")
    tt = torch.from_dlpack(t)
    assert tt.is_cuda and tt[0, 0].item() == 42.0
    v = fw.utils.dlpack.from_dlpack(torch.arange(4.0, device="cuda"))
    assert v.place.is_gpu_place() and v.numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    w = fw.to_tensor(torch.ones(3, device="cuda"))  # a copy, on the gpu
    assert w.place.is_gpu_place() and w.numpy().tolist() == [1.0, 1.0, 1.0]


@needs_gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_amp_training_on_the_gpu(dtype):
    fw.seed(0)
    model = _mlp().to(device="gpu")
    opt = fw.optimizer.Adam(1e-2, parameters=model.parameters())
    scaler = fw.amp.GradScaler(init_loss_scaling=1024.0)
    x, y = _data((64, 12))
    x, y = fw.to_tensor(x, place="gpu"), fw.to_tensor(y, place="gpu")
    losses = []
    for _ in range(8):
        with fw.amp.auto_cast(dtype=dtype):
            out = model(x)
            assert out.dtype.name in (dtype, "float32")
            loss = fw.nn.functional.cross_entropy(out.astype("float32"), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.clear_grad()
        losses.append(float(loss))
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]
    assert all(p.dtype.name == "float32" and p.place.is_gpu_place() for p in model.parameters())


@needs_gpu
@pytest.mark.parametrize("name,shape", [("lenet", (4, 1, 28, 28)), ("resnet18", (2, 3, 64, 64))])
def test_gpu_predictor_matches_the_cpu_predictor(tmp_path, name, shape):
    import fw.inference as infer

    sys.path.insert(0, os.path.dirname(__file__))
    import zoo

    fw.seed(0)
    model = zoo.build(fw, name)
    prefix = str(tmp_path / name)
    spec = [fw.static.InputSpec([None, *shape[1:]], "float32")]
    fw.jit.save(fw.jit.to_static(model, input_spec=spec), prefix)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    outs = []
    for gpu in (False, True):
        config = infer.Config(prefix)
        config.disable_glog_info()
        if gpu:
            config.enable_use_gpu(100, 0)
            assert config.use_gpu() and config.gpu_device_id() == 0
        p = infer.create_predictor(config)
        h = p.get_input_handle(p.get_input_names()[0])
        h.copy_from_cpu(x)
        p.run()
        out = p.get_output_handle(p.get_output_names()[0]).copy_to_cpu()
        assert type(out) is np.ndarray
        outs.append(out)
        if gpu:
            (t,) = p.run([x])
            assert t.place.is_gpu_place()
            np.testing.assert_allclose(t.numpy(), out, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-4)
