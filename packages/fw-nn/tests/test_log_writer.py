"""fw.utils.LogWriter on tensorboardX (issue 16): every record kind is read back with
TensorBoard's own event reader (a test-only dependency); the TensorBoard/VisualDL
callbacks; fit's progress lines off a terminal; profiler events of the DataLoader
and backward."""

import io
import sys

import numpy as np
import pytest

import fw
from fw.utils import LogWriter

event_accumulator = pytest.importorskip(
    "tensorboard.backend.event_processing.event_accumulator")


def _load(logdir):
    acc = event_accumulator.EventAccumulator(
        str(logdir), size_guidance={"scalars": 0, "histograms": 0, "images": 0,
                                    "tensors": 0})
    acc.Reload()
    return acc


def _tensor_text(tensor_event):
    return tensor_event.tensor_proto.string_val[0].decode()


def test_scalars_histogram_image_text_read_back(tmp_path):
    rng = np.random.default_rng(0)
    vals = rng.normal(size=1000)
    img = (np.arange(4 * 5 * 3) % 256).astype(np.uint8).reshape(4, 5, 3)
    with LogWriter(logdir=str(tmp_path)) as w:
        for step in range(3):
            w.add_scalar("train/loss", fw.to_tensor(np.float32(1.0 / (step + 1))), step)
        w.add_histogram("w", fw.to_tensor(vals), step=7, buckets=10)
        w.add_image("img", img, step=1)
        w.add_text("note", "hello **fw**", step=2)
    acc = _load(tmp_path)
    sc = acc.Scalars("train/loss")
    assert [s.step for s in sc] == [0, 1, 2]
    np.testing.assert_allclose([s.value for s in sc], [1.0, 0.5, 1 / 3], rtol=1e-6)
    h = acc.Histograms("w")[0]
    assert h.step == 7
    hv = h.histogram_value
    assert hv.num == 1000 and hv.min == pytest.approx(vals.min())
    assert hv.max == pytest.approx(vals.max()) and hv.sum == pytest.approx(vals.sum())
    im = acc.Images("img")[0]
    assert (im.width, im.height, im.step) == (5, 4, 1)
    from PIL import Image

    back = np.asarray(Image.open(io.BytesIO(im.encoded_image_string)))
    np.testing.assert_array_equal(back, img)  # PNG is lossless
    t = acc.Tensors("note/text_summary")[0]
    assert t.step == 2 and _tensor_text(t) == "hello **fw**"


def test_pr_curve_matches_numpy(tmp_path):
    labels = np.array([1, 0, 1, 1, 0, 0, 1, 0])
    preds = np.array([0.9, 0.8, 0.7, 0.4, 0.3, 0.2, 0.6, 0.1])
    with LogWriter(logdir=str(tmp_path)) as w:
        w.add_pr_curve("pr", labels, preds, step=0, num_thresholds=5)
    t = _load(tmp_path).Tensors("pr")[0]
    from tensorboard.util import tensor_util

    data = tensor_util.make_ndarray(t.tensor_proto)  # rows: TP, FP, TN, FN, P, R
    thresholds = np.arange(5) / 4.0
    tp = [int(((preds >= th) & (labels == 1)).sum()) for th in thresholds]
    fp = [int(((preds >= th) & (labels == 0)).sum()) for th in thresholds]
    np.testing.assert_array_equal(data[0], tp)
    np.testing.assert_array_equal(data[1], fp)


def test_hparams_and_graph(tmp_path):
    from fw.core import ir

    prog = ir.trace(lambda a: fw.exp(a) * 2.0, [ir.TensorType((3,), fw.float32)])
    with LogWriter(logdir=str(tmp_path)) as w:
        w.add_hparams({"lr": 0.1, "opt": "adam"}, ["train/loss"])
        w.add_scalar("train/loss", 0.5, 1)
        w.add_graph(prog)
    acc = _load(tmp_path)
    g = acc.Graph()
    ops = [n.op for n in g.node]
    assert ops.count("Placeholder") == 1
    want = [op.name for op in prog.global_block.ops]
    assert [o for o in ops if o != "Placeholder"][:len(want)] == want
    exp = next(n for n in g.node if n.op == "exp")
    ph = next(n for n in g.node if n.op == "Placeholder")
    assert list(exp.input) == [ph.name]  # the edge from the program's input
    # the hparams plugin's session start record carries the values
    from tensorboard.plugins.hparams import plugin_data_pb2

    meta = acc.summary_metadata
    starts = [plugin_data_pb2.HParamsPluginData.FromString(m.plugin_data.content)
              for m in meta.values() if m.plugin_data.plugin_name == "hparams"]
    sess = [s.session_start_info for s in starts if s.HasField("session_start_info")]
    assert sess and sess[0].hparams["lr"].number_value == 0.1
    assert sess[0].hparams["opt"].string_value == "adam"


def test_bad_inputs_name_the_method(tmp_path):
    with LogWriter(logdir=str(tmp_path)) as w:
        with pytest.raises(ValueError, match=r"add_scalar: value must be one real number.*\[3\]"):
            w.add_scalar("a", np.ones(3), 0)
        with pytest.raises(TypeError, match="add_scalar: step"):
            w.add_scalar("a", 1.0, 1.5)
        with pytest.raises(ValueError, match="add_image: img has shape"):
            w.add_image("i", np.zeros((4, 4)), 0)
        with pytest.raises(ValueError, match="add_pr_curve: predictions must lie"):
            w.add_pr_curve("p", [0, 1], [0.5, 2.0])
        with pytest.raises(TypeError, match="add_graph"):
            w.add_graph(object())
        with pytest.raises(ValueError, match="'%'"):
            w.add_text("a%b", "x")


def test_flush_and_periodic_flush_make_events_visible_without_close(tmp_path):
    import time

    w = LogWriter(logdir=str(tmp_path / "a"), flush_secs=1)
    try:
        for i in range(50):
            w.add_scalar("x", float(i), i)
        w.flush()  # waits for tensorboardX's writer thread, then flushes
        assert [s.value for s in _load(tmp_path / "a").Scalars("x")] == [float(i) for i in
                                                                         range(50)]
    finally:
        w.close()
    w = LogWriter(logdir=str(tmp_path / "b"), flush_secs=1)
    try:
        w.add_scalar("y", 2.0, 0)
        deadline = time.monotonic() + 20  # the background flush runs every second
        seen = []
        while not seen and time.monotonic() < deadline:
            time.sleep(0.2)
            acc = _load(tmp_path / "b")
            seen = acc.Scalars("y") if "y" in acc.Tags()["scalars"] else []
        assert [s.value for s in seen] == [2.0]
    finally:
        w.close()


class _Blobs(fw.io.Dataset):
    def __init__(self, n):
        rng = np.random.default_rng(1)
        self.x = rng.normal(size=(n, 4)).astype(np.float32)
        self.y = (self.x[:, :1] > 0).astype(np.int64)

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.x)


def _model():
    net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
    m = fw.Model(net)
    m.prepare(fw.optimizer.SGD(0.1, parameters=net.parameters()), fw.nn.CrossEntropyLoss(),
              fw.metric.Accuracy())
    return m


@pytest.mark.parametrize("cls", ["TensorBoard", "VisualDL"])
def test_callbacks_write_readable_scalars(tmp_path, cls):
    cb = getattr(fw.callbacks, cls)(str(tmp_path))
    _model().fit(_Blobs(32), _Blobs(16), batch_size=16, epochs=2, verbose=0, callbacks=[cb])
    acc = _load(tmp_path)
    assert [s.step for s in acc.Scalars("train/loss")] == [1, 2, 3, 4]
    assert [s.step for s in acc.Scalars("eval/acc")] == [1, 2]
    assert all(0.0 <= s.value <= 1.0 for s in acc.Scalars("eval/acc"))


class _NotATty(io.StringIO):
    def isatty(self):
        return False


def test_fit_verbose1_prints_lines_when_stdout_is_not_a_terminal(monkeypatch):
    buf = _NotATty()
    monkeypatch.setattr(sys, "stdout", buf)
    _model().fit(_Blobs(32), batch_size=8, epochs=2, verbose=1, log_freq=2)
    out = buf.getvalue()
    lines = [line for line in out.splitlines() if line.startswith("step ")]
    # 4 steps per epoch, a line every 2 steps: steps 2 and 4 of each epoch
    assert [line.split(" - ")[0] for line in lines] == ["step 2/4", "step 4/4"] * 2
    assert "Epoch 1/2" in out and "Epoch 2/2" in out and "loss:" in lines[0]
    assert "\r" not in out and "\x1b" not in out  # no bar control codes in a log file


def test_dataloader_and_backward_events_in_the_profile(tmp_path, monkeypatch):
    import fw.profiler as profiler

    monkeypatch.chdir(tmp_path)  # Profiler() writes ./profiler_log/ (Paddle's default)
    loader = fw.io.DataLoader(_Blobs(8), batch_size=4)
    net = fw.nn.Linear(4, 2)
    with profiler.Profiler() as prof:
        for x, _ in loader:
            net(x).sum().backward()
            prof.step(num_samples=4)
    kinds = [e.kind for e in prof.events]
    assert kinds.count("Dataloader") == 3  # two batches and the final StopIteration
    assert kinds.count("Backward") == 2
    back = next(e for e in prof.events if e.kind == "Backward")
    inner = [e for e in prof.events if e.kind == "Operator" and back.start <= e.start
             and e.end <= back.end]
    assert inner  # the backward pass's ops are in the same timeline
    assert " reader_cost: " in prof.step_info()  # DataLoader reads are the reader cost


def test_docstring_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    import doctest

    import fw.utils.log_writer as mod

    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0
