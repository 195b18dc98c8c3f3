"""The reference kernels against the records' independent oracles (issue 18).

test_op_records compares the eager path with the reference, which for an op
without a fast kernel is the reference itself; these tests check the reference
against something that shares no code with it. Every record of the "ties" and
"duplicates" kinds (records/_ties.py) must carry an oracle, and so must every
reduction, selection and scatter op listed below."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fw.core.ops import OPS
from fw.core.testing import as_tuple, load_all, reference_call

RECORDS = load_all()
KINDS = ("random", "ties", "duplicates")
# the ops whose results depend on how ties or repeated indices are broken
TIE_OPS = {"max", "min", "amax", "amin", "argmax", "argmin", "sort", "argsort", "topk",
           "kthvalue", "mode", "unique", "unique_consecutive", "searchsorted", "cummax",
           "cummin", "median", "nanmedian", "quantile", "nanquantile"}
DUP_OPS = {"scatter", "index_add", "scatter_nd_add", "put_along_axis", "index_put"}
# ids count within one op and kind ("scatter-duplicates-0"), so a new record of another
# kind does not rename them (the known-bug catalogue names them)
CASES = [pytest.param(r, id=f"{name}-{r.kind}-{[q.kind for q in recs[:i]].count(r.kind)}")
         for name, recs in sorted(RECORDS.items()) for i, r in enumerate(recs)
         if r.kind != "random"]


def test_kinds_are_known_and_carry_oracles():
    for name, recs in RECORDS.items():
        for r in recs:
            assert r.kind in KINDS, f"{name}: unknown sample kind {r.kind!r}"
            if r.kind != "random":
                assert r.oracle is not None, f"{name}: a {r.kind!r} record needs an oracle"


@pytest.mark.parametrize("ops,kind", [(TIE_OPS, "ties"), (DUP_OPS, "duplicates")])
def test_every_tie_and_scatter_op_has_its_kind(ops, kind):
    missing = sorted(n for n in ops if not any(r.kind == kind for r in RECORDS.get(n, ())))
    assert not missing, f"ops without a {kind!r} record: {missing}"


def _tol(dtype):
    return {"float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12)}.get(np.dtype(dtype).name,
                                                                    (0, 0))


@pytest.mark.parametrize("rec", CASES)
@settings(max_examples=25)  # cheap samples; ties and NaN need more than a handful of draws
@given(data=st.data())
def test_reference_matches_oracle(rec, data):
    op = OPS[rec.op]
    dtype = data.draw(st.sampled_from(rec.dtypes), label="dtype")
    s = rec.sample(data.draw, dtype)
    got, _ = reference_call(op, s.args, dict(s.attrs))
    want = as_tuple(rec.oracle(*s.args, **{**op.attrs, **s.attrs}))
    got = as_tuple(got)
    for k, w in enumerate(want):
        g = np.asarray(got[k])
        w = np.asarray(w)
        what = f"{rec.op} ({rec.kind}) output {k}"
        assert g.shape == w.shape, f"{what}: shape {g.shape} != oracle's {w.shape}"
        assert g.dtype == w.dtype, f"{what}: dtype {g.dtype} != oracle's {w.dtype}"
        r, a = _tol(g.dtype)
        np.testing.assert_allclose(g.astype(np.float64) if g.dtype.kind != "b" else g,
                                   w.astype(np.float64) if w.dtype.kind != "b" else w,
                                   rtol=r, atol=a, equal_nan=True, err_msg=what)


# ops whose values are checked elsewhere or cannot be pinned: random draws (test_random.py
# and test_random_gamma_binomial.py check their distributions and seeding) and control
# flow (test_ir_* run its blocks)
NO_VALUE_CHECK = {
    "bernoulli", "exponential", "gaussian", "gaussian_like", "multinomial", "normal", "poisson",
    "standard_gamma", "binomial",
    "randint", "randint_like", "randperm", "uniform", "uniform_like", "dropout", "alpha_dropout",
    "rrelu", "gumbel_softmax", "cond", "while",
}


def _load(path, name):
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, mod)  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def test_every_op_has_an_independent_value_check():
    """A PyTorch golden case, a hand-computed case or a record oracle for every op: the
    record test alone compares a reference kernel with itself."""
    import pathlib

    here = pathlib.Path(__file__).resolve().parent
    torch_ops = {c.op for c in _load(here / "fixtures" / "torch_cases.py", "torch_cases").CASES}
    hand_ops = {c[1] for c in _load(here / "test_golden_hand.py", "_golden_hand").CASES}
    oracle_ops = {n for n, recs in RECORDS.items() if any(r.oracle is not None for r in recs)}
    checked = torch_ops | hand_ops | oracle_ops
    missing = sorted(n for n in OPS if n not in checked and n not in NO_VALUE_CHECK)
    assert not missing, f"ops whose values nothing independent checks: {missing}"
    stale = sorted(n for n in NO_VALUE_CHECK if n in checked or n not in OPS)
    assert not stale, f"NO_VALUE_CHECK lists checked or unknown ops: {stale}"
