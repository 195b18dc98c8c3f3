"""fw.metric: Accuracy, Precision, Recall, Auc and accuracy() against direct counts."""

import numpy as np
import pytest

import fw


def test_accuracy_topk_over_batches():
    rng = np.random.default_rng(0)
    m = fw.metric.Accuracy(topk=(1, 2))
    assert m.name() == ["acc_top1", "acc_top2"]
    hits1 = hits2 = n = 0
    for _ in range(3):
        pred = rng.random((6, 4)).astype(np.float32)
        label = rng.integers(0, 4, (6, 1))
        order = np.argsort(-pred, axis=1)
        h1 = (order[:, :1] == label).any(1).sum()
        h2 = (order[:, :2] == label).any(1).sum()
        hits1, hits2, n = hits1 + h1, hits2 + h2, n + 6
        batch = m.update(m.compute(fw.to_tensor(pred), fw.to_tensor(label)))
        np.testing.assert_allclose(batch, [h1 / 6, h2 / 6])
    np.testing.assert_allclose(m.accumulate(), [hits1 / n, hits2 / n])
    m.reset()
    assert m.accumulate() == [0.0, 0.0]


def test_accuracy_one_hot_labels_and_single_k():
    m = fw.metric.Accuracy()
    pred = fw.to_tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    onehot = fw.to_tensor([[0, 1], [0, 1], [0, 1]])
    assert m.name() == ["acc"]
    assert m.update(m.compute(pred, onehot)) == pytest.approx(2 / 3)


def test_precision_recall():
    preds = np.array([0.9, 0.2, 0.6, 0.4, 0.8, 0.1])
    labels = np.array([1, 0, 0, 1, 1, 1])
    p, r = fw.metric.Precision(), fw.metric.Recall()
    p.update(preds[:3], labels[:3])
    p.update(fw.to_tensor(preds[3:]), fw.to_tensor(labels[3:]))
    r.update(preds, labels)
    # predicted positive: 0, 2, 4 -> tp 2 (0, 4), fp 1 (2); fn: 3, 5
    assert p.accumulate() == pytest.approx(2 / 3) and r.accumulate() == pytest.approx(2 / 4)
    assert p.name() == "precision" and r.name() == "recall"
    p.reset()
    assert p.accumulate() == 0.0


def test_auc_matches_the_pairwise_definition():
    rng = np.random.default_rng(1)
    score = rng.random(200)
    label = (rng.random(200) < score).astype(np.int64)
    m = fw.metric.Auc(num_thresholds=100000)
    m.update(np.stack([1 - score, score], axis=1), label[:, None])
    pos, neg = score[label == 1], score[label == 0]
    exact = ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) \
        / (pos.size * neg.size)
    assert m.accumulate() == pytest.approx(exact, abs=1e-3)
    m.reset()
    assert m.accumulate() == 0.0
    with pytest.raises(ValueError, match="probabilities"):
        m.update(np.array([1.5]), np.array([1]))


def test_accuracy_function_and_outputs():
    pred = fw.to_tensor([[0.2, 0.1, 0.4, 0.1, 0.1], [0.2, 0.3, 0.1, 0.15, 0.25]])
    label = fw.to_tensor([[2], [0]])
    correct = fw.zeros([1], dtype="int32")
    total = fw.zeros([1], dtype="int32")
    acc = fw.metric.accuracy(pred, label, k=1, correct=correct, total=total)
    assert acc.dtype == fw.float32 and float(acc) == 0.5
    assert correct.tolist() == [1] and total.tolist() == [2]
    assert float(fw.metric.accuracy(pred, label, k=2)) == 0.5
    assert float(fw.metric.accuracy(pred, label, k=3)) == 1.0


def test_metric_is_abstract():
    with pytest.raises(TypeError):
        fw.metric.Metric()
