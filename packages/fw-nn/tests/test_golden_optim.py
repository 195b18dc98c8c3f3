"""Optimizers, learning-rate schedules and gradient clipping against PyTorch-derived
(or, without a PyTorch twin, NumPy-derived) trajectories.

`test_fixture` replays ``fixtures/optim.npz`` (made by
``fixtures/gen_torch_fixtures.py``): several steps from the same parameters with
the same gradients must land on the same parameters. `test_live_torch` checks
fresh draws when PyTorch is installed.
"""

from __future__ import annotations

import functools
import importlib.util
import os

import numpy as np
import pytest
from golden_optim_cases import CASES, LR_CASES, lr_trajectory, run

import fw
import fw.nn as nn

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
BY_NAME = {c.name: c for c in CASES}
LR_BY_NAME = {c.name: c for c in LR_CASES}


@functools.cache
def _fixture():
    out = {}
    with np.load(os.path.join(FIXTURES, "optim.npz")) as z:
        for k in z.files:
            case, _, rest = k.partition("/")
            out.setdefault(case, {})[rest] = z[k]
    return out


@functools.cache
def _load_generator():
    spec = importlib.util.spec_from_file_location(
        "gen_torch_fixtures", os.path.join(FIXTURES, "gen_torch_fixtures.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_case(case, arrays):
    n = len(case.shapes)
    p0 = [arrays[f"p0/{i}"] for i in range(n)]
    grads = [[arrays[f"g/{t}/{i}"] for i in range(n)] for t in range(case.steps)]
    traj = run(case, p0, grads)
    assert len(traj) == case.steps
    for t, ps in enumerate(traj):
        for i, p in enumerate(ps):
            np.testing.assert_allclose(p, arrays[f"p/{t}/{i}"], rtol=case.tol, atol=case.tol,
                                       err_msg=f"parameter {i} after step {t + 1}")


def test_every_case_has_a_fixture():
    assert set(_fixture()) - {"__meta__"} == \
        set(BY_NAME) | {f"lr_{n}" for n in LR_BY_NAME}, \
        "fixtures/optim.npz is stale: run gen_torch_fixtures.py"


def test_clip_cases_straddle_their_thresholds():
    # the clipping fixtures are only worth something if the norms really fall on the
    # intended sides of clip_norm: the global norm above/below 1, per-tensor norms on
    # both sides of 0.5, values on both sides of the bounds
    f = _fixture()
    glob = lambda c: np.sqrt(sum((f[c][f"g/0/{i}"] ** 2).sum() for i in range(2)))  # noqa
    assert glob("clip_global_norm_above") > 1.5
    assert glob("clip_global_norm_below") < 0.7
    norms = [np.linalg.norm(f["clip_norm_mixed"][f"g/0/{i}"]) for i in range(2)]
    assert norms[0] > 0.6 and norms[1] < 0.4
    g = f["clip_value_asymmetric"]["g/0/0"]
    assert (g > 0.3).any() and (g < -0.1).any() and ((g > -0.1) & (g < 0.3)).any()


@pytest.mark.parametrize("name", sorted(n for n, c in BY_NAME.items() if c.clip is not None))
def test_clip_called_directly(name):
    # the optimizers clip the built-in strategies on their flat buffers; calling the
    # strategy on (param, grad) pairs (what custom loops and fw.jit do) must agree: with
    # SGD(lr=1) the fixture's step t subtracted exactly the clipped gradient of step t
    case, arrays = BY_NAME[name], _fixture()[name]
    n = len(case.shapes)
    prev = [arrays[f"p0/{i}"] for i in range(n)]
    for t in range(case.steps):
        params = [nn.Parameter(np.zeros(s, np.float32)) for s in case.shapes]
        grads = [fw.to_tensor(arrays[f"g/{t}/{i}"]) for i in range(n)]
        out = case.clip(list(zip(params, grads)))
        assert [p for p, _ in out] == params
        for i, (_, g) in enumerate(out):
            want = prev[i] - arrays[f"p/{t}/{i}"]
            np.testing.assert_allclose(g.numpy(), want, rtol=1e-4, atol=1e-6,
                                       err_msg=f"gradient {i} at step {t + 1}")
        prev = [arrays[f"p/{t}/{i}"] for i in range(n)]


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_fixture(name):
    check_case(BY_NAME[name], _fixture()[name])


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_live_torch(name):
    pytest.importorskip("torch")
    check_case(BY_NAME[name], _load_generator().optim_case(BY_NAME[name], seed=1))


@pytest.mark.parametrize("name", sorted(LR_BY_NAME))
def test_lr_schedule_fixture(name):
    want = _fixture()[f"lr_{name}"]["lr"]
    np.testing.assert_allclose(lr_trajectory(LR_BY_NAME[name]), want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(LR_BY_NAME))
def test_lr_schedule_live_torch(name):
    pytest.importorskip("torch")
    case = LR_BY_NAME[name]
    want = _load_generator().LR_REFS[name](case)
    np.testing.assert_allclose(lr_trajectory(case), want, rtol=1e-9, atol=1e-12)
