"""The wide & deep CTR model and synthetic data of the parameter-server tests,
shared by the PS job (ps_scripts/ctr_job.py) and the single-process reference.

Data: SLOTS categorical features per example, ids drawn Zipf-like from a
10^6-id space (each slot its own range, ranks scattered by a multiplicative
hash) so that frequent ids repeat and rare ones do not; DENSE real features;
the label is Bernoulli(sigmoid(sum of per-id true weights + dense . beta)).
"""
from __future__ import annotations

import numpy as np

import fw
import fw.nn as nn
import fw.nn.functional as F

VOCAB = 10 ** 6
SLOTS = 6
DIM = 8
DENSE = 4
SPAN = VOCAB // SLOTS
INIT = (-0.05, 0.05)


def make_data(n: int, seed: int):
    rng = np.random.default_rng(seed)
    rank = np.minimum(rng.zipf(1.25, size=(n, SLOTS)), 10 ** 9) - 1
    ids = (np.arange(SLOTS) * SPAN + (rank * 7919) % SPAN).astype(np.int64)
    truth = np.random.default_rng(12345)
    # the true weight of an id: a fixed function of it (no 10^6 table needed)
    w = np.sin(ids * 0.7131 + 0.3) * 1.5
    beta = truth.standard_normal(DENSE)
    dense = rng.standard_normal((n, DENSE)).astype(np.float32)
    logit = w.sum(1) * 0.6 + dense @ beta - 0.3
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.float32)
    return ids, dense, y


class WideDeep(nn.Layer):
    """`emb(size, name)` makes the embedding layers: ps.SparseEmbedding in the PS
    job, a compact nn.Embedding in the reference."""

    def __init__(self, emb):
        super().__init__()
        # the dense layers first: they draw from fw's generator, and the reference's
        # embeddings (which do too) must not shift their initial values
        self.dense_lin = nn.Linear(DENSE, 1)
        self.mlp = nn.Sequential(nn.Linear(SLOTS * DIM + DENSE, 32), nn.ReLU(),
                                 nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 1))
        self.wide = emb([VOCAB, 1], "wide")
        self.deep = emb([VOCAB, DIM], "deep")

    def forward(self, ids, dense):
        b = ids.shape[0]
        wide = self.wide(ids).sum(axis=1) + self.dense_lin(dense)
        deep = self.mlp(fw.concat([self.deep(ids).reshape([b, SLOTS * DIM]), dense], axis=1))
        return (wide + deep).reshape([b])


def bce(logits, y):
    return F.binary_cross_entropy_with_logits(logits, y)


def auc(score, y) -> float:
    """Exact ROC AUC (Mann-Whitney U with average ranks for ties)."""
    score = np.asarray(score, np.float64)
    y = np.asarray(y) > 0.5
    order = np.argsort(score, kind="mergesort")
    s = score[order]
    ranks = np.empty(s.size)
    i = 0
    while i < s.size:
        j = i
        while j + 1 < s.size and s[j + 1] == s[i]:
            j += 1
        ranks[i:j + 1] = (i + j) / 2.0 + 1.0
        i = j + 1
    r = np.empty(s.size)
    r[order] = ranks
    npos, nneg = int(y.sum()), int((~y).sum())
    return float((r[y].sum() - npos * (npos + 1) / 2.0) / (npos * nneg))


def batches(n_steps, trainers, batch, seed=7):
    """Training data of step s for trainer t: rows [(s*T + t)*B, ... + B)."""
    ids, dense, y = make_data(n_steps * trainers * batch, seed)
    return ids, dense, y


def test_set(n=3000):
    return make_data(n, 99)


def train_reference(n_steps, trainers, batch, lr):
    """Single-process training on the same batches (step s = the concatenation of
    every trainer's batch s) with a plain nn.Embedding over the ids the training
    data contains (rows initialised as the servers create them; ids never trained
    read as zeros, like the servers' lookup of unseen ids in eval): the same
    function as a 10^6-row table, without the 10^6 rows. Returns (test AUC,
    test scores, the model)."""
    from fw.distributed.ps.initializer import make_rows
    from fw.distributed.ps.runtime import default_seed

    ids, dense, y = batches(n_steps, trainers, batch)
    known = np.unique(ids)

    class CompactEmbedding(nn.Layer):
        def __init__(self, size, name):
            super().__init__()
            rows = make_rows({"kind": "uniform", "low": INIT[0], "high": INIT[1]},
                             default_seed(name), known, size[1])
            self.emb = nn.Embedding(known.size + 1, size[1], padding_idx=known.size)
            self.emb.weight.set_value(np.vstack([rows, np.zeros((1, size[1]), np.float32)]))

        def forward(self, x):
            a = x.numpy()
            i = np.minimum(np.searchsorted(known, a), known.size - 1)
            i[known[i] != a] = known.size
            return self.emb(fw.to_tensor(i))

    fw.seed(0)
    model = WideDeep(CompactEmbedding)
    opt = fw.optimizer.Adagrad(lr, parameters=model.parameters())
    step = trainers * batch
    for s in range(n_steps):
        sl = slice(s * step, (s + 1) * step)
        loss = bce(model(fw.to_tensor(ids[sl]), fw.to_tensor(dense[sl])), fw.to_tensor(y[sl]))
        loss.backward()
        opt.step()
        opt.clear_grad()
    model.eval()
    tids, tdense, ty = test_set()
    with fw.no_grad():
        score = model(fw.to_tensor(tids), fw.to_tensor(tdense)).numpy()
    return auc(score, ty), score, model
