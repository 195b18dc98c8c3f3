"""Layers, activations and losses against PyTorch-derived golden values.

`test_fixture` replays the committed ``fixtures/layers.npz`` (made by
``fixtures/gen_torch_fixtures.py``; no PyTorch needed): forward outputs, and the
gradients of ``sum(out_i * cot_i)`` with respect to the float inputs and to every
parameter. `test_live_torch` runs the same cases on fresh draws against PyTorch
when it is installed (skipped otherwise).
"""

from __future__ import annotations

import functools
import importlib.util
import os

import numpy as np
import pytest
from golden_cases import CASES, flatten

import fw

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
BY_NAME = {c.name: c for c in CASES}


@functools.cache
def _fixture(name):
    with np.load(os.path.join(FIXTURES, name)) as z:
        out = {}
        for k in z.files:
            case, _, rest = k.partition("/")
            out.setdefault(case, {})[rest] = z[k]
        return out


def _generator():
    pytest.importorskip("torch")
    return _load_generator()


@functools.cache
def _load_generator():
    spec = importlib.util.spec_from_file_location(
        "gen_torch_fixtures", os.path.join(FIXTURES, "gen_torch_fixtures.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_case(case, arrays):
    """Run `case` in fw on the arrays' inputs and parameters; compare outputs and
    gradients with the arrays' expected values."""
    fw.seed(0)
    layer = case.build()
    layer.train(case.train)
    named = dict(layer.named_parameters())
    expected_params = sorted(k[len("param/"):] for k in arrays if k.startswith("param/"))
    assert sorted(named) == expected_params, "the layer's parameters changed: regenerate"
    for n, p in named.items():
        p.set_value(arrays[f"param/{n}"])
    for k, v in arrays.items():
        if k.startswith("buffer/"):
            layer._buffers[k[len("buffer/"):]].set_value(v)
    xs = []
    for i, spec in enumerate(case.inputs):
        x = arrays[f"in/{i}"]
        xs.append(fw.to_tensor(x, stop_gradient=not (spec.differentiable and x.dtype.kind == "f")))
    outs = flatten(case.run(layer, *xs))
    n_out = len([k for k in arrays if k.startswith("out/")])
    assert len(outs) == n_out
    tol = case.tol
    for i, o in enumerate(outs):
        want = arrays[f"out/{i}"]
        assert list(o.shape) == list(want.shape), f"output {i}"
        np.testing.assert_allclose(o.numpy(), want, rtol=tol, atol=tol, err_msg=f"output {i}")
    loss = None
    for i, o in enumerate(outs):
        if o.stop_gradient:
            continue
        term = (o * fw.to_tensor(arrays[f"cot/{i}"]).astype(o.dtype)).sum()
        loss = term if loss is None else loss + term
    if loss is None:
        return
    loss.backward()
    for i, x in enumerate(xs):
        key = f"grad_in/{i}"
        if key in arrays:
            assert x.grad is not None, f"no gradient for input {i}"
            np.testing.assert_allclose(x.grad.numpy(), arrays[key], rtol=tol, atol=tol,
                                       err_msg=f"gradient of input {i}")
    for n, p in named.items():
        want = arrays[f"grad_param/{n}"]
        got = np.zeros_like(want) if p.grad is None else p.grad.numpy()
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol,
                                   err_msg=f"gradient of parameter {n}")


def test_every_case_has_a_fixture():
    stored = set(_fixture("layers.npz")) - {"__meta__"}
    assert stored == set(BY_NAME), "fixtures/layers.npz is stale: run gen_torch_fixtures.py"


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_fixture(name):
    check_case(BY_NAME[name], _fixture("layers.npz")[name])


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_live_torch(name):
    gen = _generator()
    check_case(BY_NAME[name], gen.layer_case(BY_NAME[name], seed=1))
