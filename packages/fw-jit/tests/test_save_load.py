"""fw.jit.save / fw.jit.load: the model file round trip, fine-tuning a loaded
model, and malformed files."""

import copy
import os

import numpy as np
import pytest
from jit_testutil import assert_same

import fw
from fw.core.ir.serialize import ModelFormatError
from fw.static import InputSpec


class Net(fw.nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = fw.nn.Conv2D(1, 3, 3, padding=1)
        self.bn = fw.nn.BatchNorm2D(3)
        self.drop = fw.nn.Dropout(0.5)
        self.fc = fw.nn.Linear(3 * 4 * 4, 2)

    def forward(self, x):
        h = fw.nn.functional.relu(self.bn(self.conv(x)))
        if h.mean() > 0.2:
            h = h * 2
        return self.fc(self.drop(h).flatten(1))


@pytest.fixture
def net():
    fw.seed(0)
    m = Net()
    m.train()
    opt = fw.optimizer.SGD(0.1, parameters=m.parameters())
    for _ in range(2):  # non-trivial BN statistics
        m(fw.randn([4, 1, 4, 4])).mean().backward()
        opt.step()
        opt.clear_grad()
    return m


def test_round_trip_outputs_equal(net, tmp_path):
    path = fw.jit.save(net, str(tmp_path / "model" / "net"), [InputSpec([None, 1, 4, 4], name="x")])
    assert path.endswith("net.fwmodel") and os.path.exists(path)
    assert net.training  # saving traced in eval mode and restored the mode
    loaded = fw.jit.load(str(tmp_path / "model" / "net"))
    net.eval()
    for n in (1, 5):
        x = fw.randn([n, 1, 4, 4])
        assert_same(loaded(x), net(x))
    keys = list(loaded.state_dict())
    assert keys == list(net.state_dict())  # structured names survive
    text = str(loaded.program())
    assert '"conv.weight"' in text and "dropout" not in text


def test_saved_labels_and_input_names(net, tmp_path):
    p = fw.jit.save(net, str(tmp_path / "n"), [InputSpec([None, 1, 4, 4], name="image")])
    prog, params = fw.core.ir.load(p)
    assert [a.label for a in prog.inputs()] == ["image"]
    assert {a.label for a in prog.parameters()} >= {"conv.weight", "fc.bias"}
    assert not prog.updates


def test_save_after_to_static_uses_the_cached_signature(tmp_path):
    fw.seed(1)
    lin = fw.jit.to_static(fw.nn.Linear(3, 2), full_graph=True)
    x = fw.randn([4, 3])
    lin(x)
    p = fw.jit.save(lin, str(tmp_path / "lin"))
    m = fw.jit.load(p)
    assert_same(m(x), lin(x))
    assert m.input_spec[0].shape == (4, 3)


def test_save_a_function(tmp_path):
    w = fw.to_tensor([[1.0, 2.0], [3.0, 4.0]])

    def f(x):
        return fw.matmul(x, w) + 1

    p = fw.jit.save(f, str(tmp_path / "f"), [InputSpec([None, 2])])
    m = fw.jit.load(p)
    x = fw.ones([3, 2])
    assert_same(m(x), f(x))
    with pytest.raises(ValueError, match="input_spec"):
        fw.jit.save(lambda x: x, str(tmp_path / "g"))


def test_fine_tuning_a_loaded_model(net, tmp_path):
    p = fw.jit.save(net, str(tmp_path / "net"), [InputSpec([None, 1, 4, 4])])
    m = fw.jit.load(p)
    m.train()
    params = m.parameters()
    assert params and all(not q.stop_gradient for q in params)
    before = [q.numpy().copy() for q in params]
    opt = fw.optimizer.Adam(0.05, parameters=params)
    rng = np.random.RandomState(0)
    x = fw.to_tensor(rng.randn(16, 1, 4, 4).astype("float32"))
    y = fw.to_tensor(rng.randint(0, 2, 16))
    losses = []
    for _ in range(15):
        loss = fw.nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    assert losses[-1] < losses[0]
    assert any(not np.array_equal(b, q.numpy()) for b, q in zip(before, params))


def test_gradients_of_a_loaded_model_equal_the_original(tmp_path):
    fw.seed(3)
    lin = fw.nn.Sequential(fw.nn.Linear(4, 5), fw.nn.Tanh(), fw.nn.Linear(5, 1))
    lin.eval()
    ref = copy.deepcopy(lin)
    p = fw.jit.save(lin, str(tmp_path / "s"), [InputSpec([None, 4])])
    m = fw.jit.load(p)
    x = fw.randn([3, 4])
    m(x).sum().backward()
    ref(x).sum().backward()
    for a, b in zip(ref.parameters(), m.parameters()):
        assert_same(a.grad, b.grad, rtol=1e-5)


@pytest.mark.parametrize("content", [b"", b"garbage", b"\x08\x00\x00\x00\x00\x00\x00\x00{}"])
def test_malformed_files_raise_model_format_error(tmp_path, content):
    path = tmp_path / "bad.fwmodel"
    path.write_bytes(content)
    with pytest.raises(ModelFormatError, match="bad.fwmodel"):
        fw.jit.load(str(tmp_path / "bad"))


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        fw.jit.load(str(tmp_path / "nothing"))


def test_translated_layer_checks_inputs(net, tmp_path):
    p = fw.jit.save(net, str(tmp_path / "net"), [InputSpec([None, 1, 4, 4])])
    m = fw.jit.load(p)
    with pytest.raises(TypeError, match="takes 1 inputs"):
        m(fw.ones([1, 1, 4, 4]), fw.ones([1]))
    with pytest.raises(fw.core.errors.InvalidArgumentError):
        with fw.no_grad():
            m(fw.ones([1, 2, 4, 4]))


def test_a_loaded_model_inside_a_converted_training_step(tmp_path):
    fw.seed(4)
    src = fw.nn.Sequential(fw.nn.Linear(4, 6), fw.nn.ReLU(), fw.nn.Linear(6, 3))
    p = fw.jit.save(src, str(tmp_path / "m"), [InputSpec([None, 4])])
    a, b = fw.jit.load(p), fw.jit.load(p)
    oa = fw.optimizer.SGD(0.1, parameters=a.parameters())
    ob = fw.optimizer.SGD(0.1, parameters=b.parameters())

    def step(m, o):
        def f(x, y):
            loss = fw.nn.functional.cross_entropy(m(x), y)
            loss.backward()
            o.step()
            o.clear_grad()
            return loss
        return f

    eager, static = step(a, oa), fw.jit.to_static(step(b, ob), full_graph=True)
    rng = np.random.RandomState(0)
    for _ in range(3):
        x = fw.to_tensor(rng.randn(5, 4).astype("float32"))
        y = fw.to_tensor(rng.randint(0, 3, 5))
        assert_same(eager(x, y), static(x, y), rtol=1e-5)
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert_same(pa, pb, rtol=1e-5, atol=1e-6)
    assert "linear" in str(static.program_cache.last().main_program)


# ---------------------------------------------------------------- names, purity, integrity
def _relabelled(tmp_path, labels):
    """A saved Linear(2, 3) whose weight and bias are labelled `labels`."""
    fw.seed(5)
    lin = fw.nn.Linear(2, 3)
    p = fw.jit.save(lin, str(tmp_path / "lin"), [InputSpec([None, 2])])
    prog, params = fw.core.ir.load(p)
    new = {}
    for a, lab in zip(prog.params(), labels):
        new[lab] = params[a.label]
        a.label = lab
    prog.captured = new
    out = tmp_path / "relabelled.fwmodel"
    fw.core.ir.save(prog, out)
    return lin, str(out)


@pytest.mark.parametrize("labels", [("training", "_parameters"), ("forward", "_sub_layers"),
                                    ("a._parameters.b", "a.training"), ("w.x", "w"),
                                    ("__dict__", "a..b")])
def test_parameter_names_are_data_not_attributes(tmp_path, labels):
    lin, path = _relabelled(tmp_path, labels)
    m = fw.jit.load(path)
    assert sorted(m.state_dict()) == sorted(labels)
    assert m.training is False and callable(m.forward)
    x = fw.randn([4, 2])
    assert_same(m(x), lin(x))
    m.train()
    assert m.training is True
    opt = fw.optimizer.SGD(0.1, parameters=m.parameters())
    m(x).sum().backward()
    opt.step()
    assert not np.array_equal(m.state_dict()[labels[0]].numpy(), lin.weight.numpy())


def _with_update(tmp_path):
    from fw.core.ir import TensorType, building

    cnt = fw.to_tensor(np.zeros(2, np.float32))
    cnt.name, cnt.persistable = "count", True
    with building() as b:
        x = b.add_input(TensorType([2], "float32"), "x")
        y = x + cnt
        b.record_update(cnt, cnt + 1.0)
        b.set_outputs([y])
    path = tmp_path / "upd.fwmodel"
    fw.core.ir.save(b.program, path)
    return path


def test_jit_load_refuses_state_updates_unless_stripped(tmp_path):
    path = _with_update(tmp_path)
    with pytest.raises(ModelFormatError, match=r"upd.fwmodel.*state updates of \['count'\]"):
        fw.jit.load(str(path))
    with pytest.raises(ModelFormatError, match=r"state updates of \['count'\]"):
        fw.static.load_inference_model(str(path))
    m = fw.jit.load(str(path), strip_state_updates=True)
    x = fw.ones([2])
    for _ in range(3):
        assert_same(m(x), x)  # the same output on every run


def test_jit_load_checks_the_checksums_and_limits(net, tmp_path):
    p = fw.jit.save(net, str(tmp_path / "net"), [InputSpec([None, 1, 4, 4])])
    data = bytearray(tmp_path.joinpath("net.fwmodel").read_bytes())
    w = net.fc.weight.numpy().tobytes()
    data[bytes(data).index(w[:16]) + 2] ^= 0x10
    bad = tmp_path / "bad.fwmodel"
    bad.write_bytes(bytes(data))
    with pytest.raises(ModelFormatError, match=r"bad.fwmodel: tensor 'fc.weight' .*checksum"):
        fw.jit.load(str(bad))
    from fw.core.ir.serialize import LoadLimits, ModelLimitError

    with pytest.raises(ModelLimitError, match="max_ops=2"):
        fw.jit.load(p, limits=LoadLimits(max_ops=2))
