"""ZeRO sharding in one process (== plain training) and its partitioning
arithmetic (2 ranks: tests/test_dist_equivalence.py)."""

from __future__ import annotations

import numpy as np
import pytest

import fw
import fw.nn as nn
from fw.distributed.sharding import group_sharded_parallel, partition_params
from fw.distributed.sharding._zero import shard_range


def _mlp():
    fw.seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))


def test_partition_balances_elements():
    sizes = [100, 10, 80, 30, 5, 60]
    owner = partition_params(sizes, 3)
    load = [sum(s for s, o in zip(sizes, owner) if o == r) for r in range(3)]
    assert sorted(load) == [90, 95, 100]  # 100 | 80+10+5 | 60+30
    assert partition_params([1, 1], 1) == [0, 0]


def test_shard_range_covers_everything_once():
    for numel in (1, 7, 8, 9, 100):
        for n in (1, 2, 3, 4):
            got = []
            for r in range(n):
                s, e, size = shard_range(numel, n, r)
                assert e - s <= size and size * n >= numel
                got.extend(range(s, e))
            assert got == list(range(numel))


@pytest.mark.parametrize("level", ["os", "os_g", "p_g_os"])
def test_single_process_levels_equal_plain_training(level):
    rng = np.random.default_rng(0)
    X = fw.to_tensor(rng.standard_normal((6, 4)).astype("float32"))
    ref = _mlp()
    opt = fw.optimizer.Adam(learning_rate=0.05, parameters=ref.parameters())
    m = _mlp()
    m2, opt2, _ = group_sharded_parallel(
        m, fw.optimizer.Adam(learning_rate=0.05, parameters=m.parameters()), level)
    for _ in range(3):
        (ref(X) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()
        (m2(X) ** 2).mean().backward()
        opt2.step()
        opt2.clear_grad()
    for (k, a), b in zip(m2.state_dict().items(), ref.state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6, err_msg=k)


def test_bad_level_is_named():
    m = _mlp()
    with pytest.raises(ValueError, match="level must be 'os', 'os_g' or 'p_g_os', got 'p_g'"):
        group_sharded_parallel(m, fw.optimizer.Adam(parameters=m.parameters()), "p_g")
    with pytest.raises(TypeError, match="'model' must be an fw.nn.Layer"):
        group_sharded_parallel(object(), None, "os")


class _Tied(nn.Layer):
    """An embedding whose table is also the output head (read outside its layer)."""

    def __init__(self):
        super().__init__()
        fw.seed(1)
        self.emb = nn.Embedding(7, 4)
        self.mix = nn.Linear(4, 4)

    def forward(self, ids):
        h = self.mix(self.emb(ids))
        return fw.matmul(h, self.emb.weight, transpose_y=True)


def test_stage3_keeps_tied_weights_tied_and_equals_plain_training():
    ids = fw.to_tensor(np.array([[1, 2, 3], [4, 5, 6]]))
    ref = _Tied()
    opt = fw.optimizer.Adam(learning_rate=0.05, parameters=ref.parameters())
    m = _Tied()
    m2, opt2, _ = group_sharded_parallel(
        m, fw.optimizer.Adam(learning_rate=0.05, parameters=m.parameters()), "p_g_os")
    assert len(m2._slots) == len(list(ref.parameters())) == 3
    for _ in range(3):
        (ref(ids) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()
        (m2(ids) ** 2).mean().backward()
        opt2.step()
        opt2.clear_grad()
    assert m.emb.weight._data.size == 0  # between steps only the slices are held
    for (k, a), b in zip(m2.state_dict().items(), ref.state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6, err_msg=k)


def test_stage3_single_process_has_no_buckets_and_checks_the_bucket_size():
    m = _mlp()
    m2, opt2, _ = group_sharded_parallel(m, fw.optimizer.Adam(parameters=m.parameters()),
                                         "p_g_os")
    (m2(fw.ones([2, 4])) ** 2).mean().backward()
    opt2.step()
    assert m2.comm_stats() == {"reduce_scatters": 0, "early": 0, "gradients": 0,
                               "prefetched": 0, "prefetch_used": 0}
    m = _mlp()
    with pytest.raises(ValueError, match="buffer_max_size .* must be a positive number, "
                                         "got 0"):
        group_sharded_parallel(m, fw.optimizer.Adam(parameters=m.parameters()), "p_g_os",
                               buffer_max_size=0)
