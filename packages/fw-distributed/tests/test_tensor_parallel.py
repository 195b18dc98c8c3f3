"""Tensor-parallel layers with one model-parallel rank equal the dense layers; the
Megatron splits of the weights (2-rank equality is in tests/test_dist_equivalence.py)."""

from __future__ import annotations

import numpy as np
import pytest

import fw
import fw.nn as nn
import fw.nn.functional as F
from fw.distributed.fleet.meta_parallel import (
    ColumnParallelLinear,
    ParallelCrossEntropy,
    RowParallelLinear,
    VocabParallelEmbedding,
)
from fw.distributed.fleet.meta_parallel.mp_layers import split_bias, split_weight


def test_mp1_linear_layers_equal_nn_linear():
    rng = np.random.default_rng(0)
    x = fw.to_tensor(rng.standard_normal((3, 4)).astype("float32"))
    for cls in (ColumnParallelLinear, RowParallelLinear):
        layer = cls(4, 6)
        ref = nn.Linear(4, 6)
        ref.weight.set_value(layer.weight.numpy())
        ref.bias.set_value(layer.bias.numpy())
        np.testing.assert_allclose(layer(x).numpy(), ref(x).numpy(), rtol=1e-6)
        assert not layer.weight.is_distributed


def test_mp1_layers_start_with_the_dense_layers_weights():
    fw.seed(3)
    ref = [nn.Linear(4, 6), nn.Linear(6, 2), nn.Embedding(10, 3)]
    fw.seed(3)
    tp = [ColumnParallelLinear(4, 6), RowParallelLinear(6, 2), VocabParallelEmbedding(10, 3)]
    for a, b in zip(tp, ref):
        np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())


def test_mp1_embedding_and_cross_entropy_equal_dense():
    emb = VocabParallelEmbedding(10, 3)
    ids = fw.to_tensor(np.array([[1, 9], [0, 4]]))
    np.testing.assert_array_equal(emb(ids).numpy(), emb.weight.numpy()[ids.numpy()])
    rng = np.random.default_rng(1)
    logits = fw.to_tensor(rng.standard_normal((4, 10)).astype("float32"), stop_gradient=False)
    lab = fw.to_tensor(np.array([[1], [9], [0], [3]]))
    got = ParallelCrossEntropy()(logits, lab)
    want = F.cross_entropy(logits, lab, reduction="none")
    assert got.shape == [4, 1]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)


def test_splits_reassemble_the_dense_weight():
    w = np.arange(24, dtype="float32").reshape(4, 6)
    cols = [split_weight(w, "column", r, 2) for r in range(2)]
    np.testing.assert_array_equal(np.concatenate(cols, axis=1), w)
    assert cols[1].shape == (4, 3) and cols[1][0, 0] == 3
    rows = [split_weight(w, "row", r, 2) for r in range(2)]
    np.testing.assert_array_equal(np.concatenate(rows, axis=0), w)
    b = np.arange(6.0)
    np.testing.assert_array_equal(split_bias(b, "column", 1, 3), [2.0, 3.0])
    np.testing.assert_array_equal(split_bias(b, "row", 1, 3), b)
    with pytest.raises(ValueError, match="kind must be"):
        split_weight(w, "diagonal", 0, 2)


def test_bad_inputs_are_named():
    emb = VocabParallelEmbedding(10, 3)
    ce = ParallelCrossEntropy()
    logits = fw.to_tensor(np.zeros((4, 10), "float32"))
    with pytest.raises(ValueError, match="ParallelCrossEntropy: label shape"):
        ce(logits, fw.to_tensor(np.zeros((3,), "int64")))
    with pytest.raises(TypeError, match="ParallelCrossEntropy: label must be integer"):
        ce(logits, fw.to_tensor(np.zeros((4,), "float32")))
    assert emb.weight.shape == [10, 3]
