"""Random ops: reproducibility (fw.seed, per-op seeds, rng state), value ranges,
and distribution moments on large samples. Every test seeds first, so the
tolerances below are deterministic (and loose: several standard errors)."""

import numpy as np
import pytest

import fw
from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.core.ir import run, trace

N = 200_000


def t(a, dtype=None):
    return fw.to_tensor(np.asarray(a), dtype=dtype)


def draws():
    return [fw.rand([3]).numpy(), fw.randn([3]).numpy(), fw.randint(0, 100, [3]).numpy(),
            fw.randperm(6).numpy(), fw.uniform([2], min=2.0, max=3.0).numpy(),
            fw.normal(t([0.0, 10.0]), 1.0).numpy(), fw.bernoulli(fw.full([4], 0.5)).numpy(),
            fw.multinomial(t([0.2, 0.3, 0.5]), 2).numpy(), fw.poisson(fw.full([3], 3.0)).numpy()]


def test_seed_makes_every_op_reproducible():
    fw.seed(123)
    a = draws()
    fw.seed(123)
    b = draws()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    fw.seed(124)
    c = draws()
    assert any(not np.array_equal(x, y) for x, y in zip(a, c))


def test_rng_state_round_trip():
    fw.seed(5)
    fw.rand([10])
    state = fw.get_rng_state()
    a = fw.randn([5]).numpy()
    fw.rand([7])
    fw.set_rng_state(state)
    np.testing.assert_array_equal(fw.randn([5]).numpy(), a)


def test_op_seed_gives_a_fixed_stream_and_leaves_the_global_one_alone():
    fw.seed(9)
    ref = fw.rand([4]).numpy()
    fw.seed(9)
    a = fw.uniform([4], seed=77).numpy()
    b = fw.uniform([4], seed=77).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, fw.uniform([4], seed=78).numpy())
    np.testing.assert_array_equal(fw.rand([4]).numpy(), ref)  # global stream not consumed
    np.testing.assert_array_equal(fw.gaussian([3], seed=5).numpy(),
                                  fw.gaussian([3], seed=5).numpy())


def test_compiled_programs_draw_fresh_numbers_and_follow_seed():
    prog = trace(lambda: fw.rand([4]) + fw.randn([4]), [])
    fw.seed(3)
    first = run(prog).numpy()
    second = run(prog).numpy()
    assert not np.array_equal(first, second)
    fw.seed(3)
    np.testing.assert_array_equal(run(prog).numpy(), first)


def test_default_dtype_and_explicit_dtypes():
    assert fw.rand([2]).dtype == fw.float32 and fw.randn([2]).dtype == fw.float32
    prev = fw.get_default_dtype()
    fw.set_default_dtype("float64")
    try:
        assert fw.rand([2]).dtype == fw.float64 and fw.normal(shape=[2]).dtype == fw.float64
    finally:
        fw.set_default_dtype(prev)
    assert fw.standard_normal([2], "float64").dtype == fw.float64
    assert fw.randint(0, 5, [2]).dtype == fw.int64
    assert fw.randint(0, 5, [2], dtype="int32").dtype == fw.int32
    assert fw.randint_like(fw.zeros([2, 3]), 0, 5).dtype == fw.float32
    assert fw.randperm(4, dtype="float32").dtype == fw.float32
    assert fw.uniform([3], dtype="float16").dtype == fw.float16
    assert fw.rand(t([2, 3])).shape == [2, 3]  # shape given as a tensor


def test_value_ranges():
    fw.seed(0)
    u = fw.uniform([N], min=-2.0, max=3.0).numpy()
    assert u.min() >= -2.0 and u.max() < 3.0
    h = fw.uniform([N], dtype="float16", min=0.0, max=1.0).numpy()
    assert h.min() >= 0.0 and h.max() < 1.0
    r = fw.randint(-3, 4, [N]).numpy()
    assert r.min() == -3 and r.max() == 3
    assert set(np.unique(fw.randint(5, shape=[1000]).numpy())) == set(range(5))
    b = fw.bernoulli(fw.full([1000], 0.5)).numpy()
    assert set(np.unique(b)) == {0.0, 1.0}
    assert fw.bernoulli(t([0.0, 1.0, 1.0])).numpy().tolist() == [0.0, 1.0, 1.0]
    with pytest.raises(InvalidArgumentError, match="'high'"):
        fw.randint(3, 3)


def test_moments():
    fw.seed(42)
    z = fw.randn([N]).numpy().astype(np.float64)
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1.0) < 0.01
    g = fw.gaussian([N], mean=3.0, std=2.0).numpy().astype(np.float64)
    assert abs(g.mean() - 3.0) < 0.02 and abs(g.std() - 2.0) < 0.02
    u = fw.uniform([N], min=1.0, max=5.0).numpy().astype(np.float64)
    assert abs(u.mean() - 3.0) < 0.02 and abs(u.var() - 16.0 / 12) < 0.02
    n = fw.normal(fw.full([N], -1.0), fw.full([N], 0.5)).numpy()
    assert abs(n.mean() + 1.0) < 0.01 and abs(n.std() - 0.5) < 0.01
    p = fw.poisson(fw.full([N], 4.0)).numpy()
    assert abs(p.mean() - 4.0) < 0.03 and abs(p.var() - 4.0) < 0.1
    b = fw.bernoulli(fw.full([N], 0.3)).numpy()
    assert abs(b.mean() - 0.3) < 0.01


def test_in_place_fills():
    fw.seed(7)
    x = fw.zeros([N])
    assert x.uniform_(min=2.0, max=4.0) is x
    v = x.numpy()
    assert v.min() >= 2.0 and v.max() < 4.0 and abs(v.mean() - 3.0) < 0.02
    x.normal_(mean=1.0, std=3.0)
    assert abs(x.numpy().mean() - 1.0) < 0.05 and abs(x.numpy().std() - 3.0) < 0.05
    x.exponential_(lam=2.0)
    assert x.numpy().min() >= 0 and abs(x.numpy().mean() - 0.5) < 0.01
    x.bernoulli_(0.25)
    assert abs(x.numpy().mean() - 0.25) < 0.01 and x.dtype == fw.float32
    y = fw.zeros([3], dtype="float64")
    fw.normal_(y)
    assert y.dtype == fw.float64 and np.all(y.numpy() != 0)


def test_multinomial():
    fw.seed(11)
    for _ in range(20):
        s = fw.multinomial(t([[0.1, 0.2, 0.3, 0.4, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0]]),
                           num_samples=4).numpy()
        assert s.shape == (2, 4)
        for row in s:
            assert len(set(row.tolist())) == 4  # distinct without replacement
        assert 4 not in s[0].tolist()  # a zero weight is never drawn
    p = np.array([0.1, 0.2, 0.7])
    with pytest.raises(InvalidArgumentError, match="num_samples"):  # Paddle: at least 1
        fw.multinomial(t(p), num_samples=0)
    s = fw.multinomial(t(p), num_samples=50_000, replacement=True).numpy()
    freq = np.bincount(s, minlength=3) / s.size
    assert np.allclose(freq, p, atol=0.01)
    with pytest.raises(InvalidArgumentError, match="exceeds"):
        fw.multinomial(t([0.5, 0.5]), num_samples=3)


def test_randperm_is_a_permutation():
    fw.seed(0)
    for n in (0, 1, 10, 1000):
        p = fw.randperm(n).numpy()
        assert sorted(p.tolist()) == list(range(n))
    assert not np.array_equal(fw.randperm(1000).numpy(), np.arange(1000))


def test_random_ops_are_marked_random_and_not_differentiable():
    from fw.core.ops import OPS

    for name in ("uniform", "gaussian", "normal", "randint", "randint_like", "randperm",
                 "bernoulli", "multinomial", "poisson", "uniform_like", "gaussian_like",
                 "exponential"):
        assert OPS[name].random and not OPS[name].differentiable, name
    assert _dt.get_default_dtype() == fw.float32
