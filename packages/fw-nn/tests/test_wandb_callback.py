"""fw.callbacks.WandbCallback (issue 16): the run it opens and the metrics it logs
during Model.fit / evaluate, against a stand-in ``wandb`` module that records the calls
(CI has no wandb); without wandb, the ImportError names the pip package."""

import sys
import types

import numpy as np
import pytest

import fw


class _Run:
    def __init__(self, calls):
        self.calls = calls

    def define_metric(self, name, step_metric=None):
        self.calls.append(("define_metric", name, step_metric))

    def log(self, d):
        self.calls.append(("log", dict(d)))

    def finish(self):
        self.calls.append(("finish",))


@pytest.fixture
def fake_wandb(monkeypatch):
    calls = []
    mod = types.ModuleType("wandb")
    mod.run = None

    def init(**kw):
        calls.append(("init", kw))
        return _Run(calls)

    mod.init = init
    monkeypatch.setitem(sys.modules, "wandb", mod)
    monkeypatch.delenv("PADDLE_LOCAL_RANK", raising=False)
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    return calls


class Blobs(fw.io.Dataset):
    def __init__(self, n, seed=0):
        rng = np.random.default_rng(seed)
        self.y = rng.integers(0, 2, n)
        self.x = (rng.standard_normal((n, 4)) + self.y[:, None] * 2).astype(np.float32)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], np.int64(self.y[i])


def _model():
    fw.seed(0)
    net = fw.nn.Sequential(fw.nn.Linear(4, 2))
    m = fw.Model(net)
    m.prepare(fw.optimizer.SGD(0.1, parameters=net.parameters()), fw.nn.CrossEntropyLoss(),
              fw.metric.Accuracy())
    return m


def test_logs_train_and_eval_metrics(fake_wandb):
    cb = fw.callbacks.WandbCallback(project="p", name="r", mode="offline", tags=["x"])
    assert fake_wandb[0] == ("init", {"project": "p", "name": "r", "entity": None, "dir": None,
                                      "mode": "offline", "job_type": None, "tags": ["x"]})
    _model().fit(Blobs(32), Blobs(16, 1), batch_size=16, epochs=2, verbose=0, callbacks=[cb])
    logs = [c[1] for c in fake_wandb if c[0] == "log"]
    train = [d for d in logs if "train/step" in d]
    evals = [d for d in logs if "epoch" in d]
    assert [d["train/step"] for d in train] == [1, 2, 3, 4]
    assert all({"train/loss", "train/acc"} <= set(d) for d in train)
    assert [d["epoch"] for d in evals] == [0, 1] and all("eval/loss" in d for d in evals)
    assert all(isinstance(v, float) for d in logs for k, v in d.items() if "/" in k and
               k != "train/step")
    defined = [c[1:] for c in fake_wandb if c[0] == "define_metric"]
    assert ("train/*", "train/step") in defined and ("eval/*", "epoch") in defined
    assert fake_wandb[-1] == ("finish",)


def test_only_local_rank_zero_writes(fake_wandb, monkeypatch):
    monkeypatch.setenv("PADDLE_LOCAL_RANK", "1")
    cb = fw.callbacks.WandbCallback()
    _model().fit(Blobs(16), batch_size=16, epochs=1, verbose=0, callbacks=[cb])
    assert fake_wandb == []


def test_missing_wandb_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)  # import wandb -> ImportError
    with pytest.raises(ImportError, match="pip install wandb"):
        fw.callbacks.WandbCallback()
