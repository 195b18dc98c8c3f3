"""fw.Model (fit/evaluate/predict/save/load), its callbacks, the TensorBoard event
writer, summary and flops."""

import os
import sys

import numpy as np
import pytest

import fw


class Blobs(fw.io.Dataset):
    """Two Gaussian blobs in 4-D: class 1 is shifted by +1.5."""

    def __init__(self, n, seed=0):
        rng = np.random.default_rng(seed)
        self.y = rng.integers(0, 2, n)
        self.x = (rng.standard_normal((n, 4)) + 1.5 * self.y[:, None]).astype(np.float32)

    def __getitem__(self, i):
        return self.x[i], np.int64(self.y[i])

    def __len__(self):
        return len(self.y)


def make_model(lr=0.05, metrics=True):
    fw.seed(0)
    net = fw.nn.Sequential(fw.nn.Linear(4, 16), fw.nn.ReLU(), fw.nn.Linear(16, 2))
    model = fw.Model(net)
    model.prepare(fw.optimizer.Adam(lr, parameters=net.parameters()), fw.nn.CrossEntropyLoss(),
                  fw.metric.Accuracy() if metrics else None)
    return model


class Recorder(fw.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.events = []

    def on_train_begin(self, logs=None):
        self.events.append("train_begin")

    def on_epoch_begin(self, epoch, logs=None):
        self.events.append(f"epoch_begin{epoch}")

    def on_train_batch_end(self, step, logs=None):
        self.events.append("batch")
        self.last_logs = dict(logs)

    def on_epoch_end(self, epoch, logs=None):
        self.events.append(f"epoch_end{epoch}")

    def on_eval_end(self, logs=None):
        self.events.append("eval_end")
        self.eval_logs = dict(logs)

    def on_train_end(self, logs=None):
        self.events.append("train_end")


def test_fit_lowers_the_loss_and_fires_callbacks(tmp_path):
    model = make_model()
    train, val = Blobs(64), Blobs(32, seed=1)
    before = model.evaluate(val, batch_size=16, verbose=0)
    rec = Recorder()
    model.fit(train, val, batch_size=16, epochs=3, verbose=0, callbacks=[rec],
              save_dir=str(tmp_path))
    after = model.evaluate(val, batch_size=16, verbose=0)
    assert after["loss"][0] < before["loss"][0]
    assert after["acc"] > 0.8
    assert rec.events[0] == "train_begin" and rec.events[-1] == "train_end"
    assert rec.events.count("batch") == 3 * 4 and rec.events.count("eval_end") == 3
    assert rec.events[1:7] == ["epoch_begin0", "batch", "batch", "batch", "batch", "epoch_end0"]
    assert {"loss", "acc", "step", "batch_size"} <= set(rec.last_logs)
    for f in ("0.pdparams", "0.pdopt", "2.pdparams", "final.pdparams", "final.pdopt"):
        assert os.path.exists(tmp_path / f), f


def test_early_stopping_stops_and_saves_the_best(tmp_path):
    model = make_model(lr=1e-9)  # no progress: every evaluation is "no better"
    stop = fw.callbacks.EarlyStopping("loss", mode="min", patience=1, verbose=0, min_delta=1.0)
    rec = Recorder()
    model.fit(Blobs(32), Blobs(16, 1), batch_size=16, epochs=10, verbose=0,
              callbacks=[stop, rec], save_dir=str(tmp_path))
    assert rec.events.count("eval_end") == 3  # best, one tolerated, then stop
    assert model.stop_training
    assert os.path.exists(tmp_path / "best_model.pdparams")


def test_lr_scheduler_and_reduce_on_plateau_callbacks():
    net = fw.nn.Linear(4, 2)
    sched = fw.optimizer.lr.StepDecay(0.1, step_size=1, gamma=0.5)
    model = fw.Model(net)
    model.prepare(fw.optimizer.SGD(sched, parameters=net.parameters()), fw.nn.CrossEntropyLoss())
    model.fit(Blobs(32), batch_size=16, epochs=1, verbose=0)
    assert sched.last_epoch == 2  # stepped after each of the 2 batches
    model = make_model(lr=1e-9, metrics=False)
    cb = fw.callbacks.ReduceLROnPlateau("loss", factor=0.5, patience=1, verbose=0, min_delta=1.0)
    model.fit(Blobs(32), Blobs(16, 1), batch_size=16, epochs=2, verbose=0, callbacks=[cb])
    assert model._optimizer.get_lr() == pytest.approx(0.5e-9)


def test_batch_methods_predict_and_checkpoint_round_trip(tmp_path):
    model = make_model()
    ds = Blobs(20)
    out = model.train_batch([ds.x[:8]], [ds.y[:8]])
    losses, metrics = out
    assert len(losses) == 1 and np.shape(losses[0]) == () and 0 <= metrics[0] <= 1
    ev = model.eval_batch([ds.x[:8]], [ds.y[:8]])
    assert len(ev[0]) == 1
    pred = model.predict_batch([ds.x[:5]])
    assert pred[0].shape == (5, 2)
    outs = model.predict(ds, batch_size=8, verbose=0)
    assert len(outs) == 1 and [o.shape[0] for o in outs[0]] == [8, 8, 4]
    stacked = model.predict(ds, batch_size=8, stack_outputs=True, verbose=0)
    assert stacked[0].shape == (20, 2)
    path = str(tmp_path / "ckpt" / "m")
    model.save(path)
    other = make_model()
    other.network[0].weight.set_value(np.zeros([4, 16], np.float32))
    other.load(path)
    for a, b in zip(model.parameters(), other.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # the optimizer state follows the parameters although their unique names differ
    sa, sb = model._optimizer.state_dict(), other._optimizer.state_dict()
    for a, b in zip(model.parameters(), other.parameters()):
        assert a.name != b.name
        np.testing.assert_array_equal(sa[f"{a.name}_moment1_0"].numpy(),
                                      sb[f"{b.name}_moment1_0"].numpy())
        assert sb[f"{b.name}_moment1_0"].numpy().any()


def test_save_for_inference_needs_fw_jit(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "fw.jit", None)
    with pytest.raises(ModuleNotFoundError, match="fw-jit"):
        make_model().save(str(tmp_path / "infer"), training=False)


def test_progress_logging(capsys):
    model = make_model()
    model.fit(Blobs(32), batch_size=16, epochs=2, verbose=2, log_freq=1)
    out = capsys.readouterr().out
    assert "Epoch 1/2" in out and "step 2/2" in out and "loss:" in out and "acc:" in out
    model.fit(Blobs(32), batch_size=16, epochs=1, verbose=0)
    assert capsys.readouterr().out == ""


def test_amp_configs_bfloat16():
    net = fw.nn.Sequential(fw.nn.Linear(4, 16), fw.nn.ReLU(), fw.nn.Linear(16, 2))
    model = fw.Model(net)
    model.prepare(fw.optimizer.Adam(0.05, parameters=net.parameters()),
                  fw.nn.CrossEntropyLoss(), amp_configs={"level": "O1", "dtype": "bfloat16"})
    ds = Blobs(32)
    first = model.train_batch([ds.x], [ds.y])[0]
    for _ in range(10):
        last = model.train_batch([ds.x], [ds.y])[0]
    assert float(last) < float(first)
    assert net[0].weight.dtype == fw.float32


def test_summary_and_flops(capsys):
    net = fw.nn.Sequential(fw.nn.Conv2D(1, 2, 3, padding=1), fw.nn.ReLU(), fw.nn.Flatten(),
                           fw.nn.Linear(2 * 4 * 4, 3))
    info = fw.summary(net, (1, 1, 4, 4))
    out = capsys.readouterr().out
    assert info == {"total_params": 20 + 99, "trainable_params": 119}
    assert "Conv2D-1" in out and "Linear-1" in out and "[1, 3]" in out
    n = fw.flops(net, [1, 1, 4, 4])
    assert n == 32 * (9 + 1) + 32 * 3 + 3
    assert fw.Model(net).summary((1, 1, 4, 4))["total_params"] == 119
