"""A short fine-tune recovers the accuracy that 50 % channel pruning costs:
examples/digits.py's LeNet on the 8x8 digits (kept small so the test is a few
seconds of CPU), trained, pruned (both convs halved), fine-tuned."""

import sys
from pathlib import Path

import numpy as np
import pytest

import fw
import fw.slim as slim

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
sys.path.insert(0, str(EXAMPLES))


def _train(model, x, y, epochs, lr, bs=128):
    opt = fw.optimizer.Adam(learning_rate=lr, parameters=model.parameters())
    model.train()
    rng = np.random.default_rng(0)
    for _ in range(epochs):
        idx = rng.permutation(len(y))
        for i in range(0, len(idx), bs):
            j = idx[i:i + bs]
            loss = fw.nn.functional.cross_entropy(model(fw.to_tensor(x[j])), fw.to_tensor(y[j]))
            loss.backward()
            opt.step()
            opt.clear_grad()
    model.eval()


def _accuracy(model, x, y):
    from fw.autograd import no_grad

    with no_grad():
        return float((model(fw.to_tensor(x)).numpy().argmax(1) == y).mean())


def test_finetune_recovers_accuracy():
    pytest.importorskip("sklearn")
    import digits
    from _data import load_digits_dataset

    tr = load_digits_dataset("train", upscale=False)
    te = load_digits_dataset("test", upscale=False)
    fw.seed(0)
    model = digits.LeNet(size=8)
    _train(model, tr.images, tr.labels, epochs=4, lr=0.02)
    acc0 = _accuracy(model, te.images, te.labels)
    assert acc0 > 0.9
    pruner = slim.L1NormFilterPruner(model, [1, 1, 8, 8])
    pruner.prune(0.5)
    assert model.features[0].weight.shape == [3, 1, 5, 5]
    assert model.features[3].weight.shape == [8, 3, 5, 5]
    assert model.classifier[0].weight.shape[0] == 8 * 2 * 2
    acc_pruned = _accuracy(model, te.images, te.labels)
    assert acc_pruned < acc0 - 0.05  # pruning hurt: the recovery below is real
    _train(model, tr.images, tr.labels, epochs=4, lr=0.01)
    acc_ft = _accuracy(model, te.images, te.labels)
    assert acc_ft >= acc0 - 0.01, (acc0, acc_pruned, acc_ft)
