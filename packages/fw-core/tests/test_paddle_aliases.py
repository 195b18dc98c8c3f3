"""Paddle 3.3's argument aliases (fw.core.aliases + paddle_aliases.json) and the Tensor methods /
top-level names of fw.core.api.composite, checked against values from the real Paddle 3.3.1
(fixtures/paddle_parity.json, written by fixtures/gen_paddle_parity.py)."""

from __future__ import annotations

import importlib
import inspect
import json
import math
from pathlib import Path

import numpy as np
import pytest

import fw
from fw.core import aliases as A

FIX = json.loads((Path(__file__).parent / "fixtures" / "paddle_parity.json").read_text())


def _resolve(key: str):
    """The fw object(s) that Paddle name `key` maps to (function, method or class member)."""
    parts = key.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        mod_name = "fw" + "".join("." + p for p in parts[1:cut])
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        obj = mod
        for p in parts[cut:]:
            obj = getattr(obj, p, None)
            if obj is None:
                break
        if obj is not None:
            if isinstance(obj, type):
                obj = obj.__dict__.get("__init__")
            return obj
    return None


def _entries():
    import fw.nn  # noqa: F401  (applies the nn tables)

    for key, aliases in A.TABLE.items():
        obj = _resolve(key)
        if obj is not None and callable(obj):
            yield key, aliases, obj


ENTRIES = list(_entries())


def test_table_is_paddles():
    # a few facts read from Paddle 3.3.1's decorators / C++ argument parser
    assert A.TABLE["paddle.sum"] == {"input": "x", "dim": "axis"}
    assert A.TABLE["paddle.nn.functional.softmax"] == {"input": "x", "dim": "axis"}
    assert A.TABLE["paddle.concat"] == {"tensors": "x", "dim": "axis"}
    assert A.TABLE["paddle.nn.LayerNorm"] == {"eps": "epsilon"}
    assert len(A.TABLE) > 200
    assert len(ENTRIES) > 150  # fw has most of them


@pytest.mark.parametrize("key,aliases,obj", ENTRIES, ids=[e[0] for e in ENTRIES])
def test_every_alias_reaches_the_canonical_argument(key, aliases, obj):
    """Each alias in the table is accepted by fw's function and lands on a parameter that
    fw's function really has; passing both names is a TypeError naming the function."""
    assert getattr(obj, "_fw_aliases", None) is not None, f"{key}: aliases not applied"
    assert obj._fw_aliases.items() >= aliases.items()
    params = inspect.signature(obj.__wrapped__).parameters
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    for alias, canon in aliases.items():
        assert canon in params or takes_kwargs, f"{key}: fw has no argument {canon!r}"
        # the wrapper renames before calling: a spy shows the canonical name arrives
        def spy(*args, **kwargs):
            return kwargs

        assert A.with_aliases(spy, aliases, key)(**{alias: 1}) == {canon: 1}
        names = f"({key.rsplit('.', 1)[-1]}|{obj.__name__})"  # gt is greater_than in fw
        # the other required arguments get placeholders: the check comes before the call
        fill = {n: None for n, p in params.items() if p.default is p.empty and n != canon
                and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        with pytest.raises(TypeError, match=rf"{names}\(\) got both '{canon}' .*'{alias}'"):
            obj(**fill, **{alias: 1, canon: 1})


def test_no_alias_calls_skip_the_renaming():
    calls = []

    def f(x, axis=None):
        calls.append((x, axis))
        return x

    g = A.with_aliases(f, {"dim": "axis"}, "f")
    g(1, 2)
    g(1, axis=3)
    g(1, dim=4)
    assert calls == [(1, 2), (1, 3), (1, 4)]
    assert inspect.signature(g) == inspect.signature(f)


def test_dunders_are_not_wrapped():
    assert not hasattr(fw.Tensor.__add__, "_fw_aliases")
    assert hasattr(fw.sum, "_fw_aliases") and hasattr(fw.Tensor.sum, "_fw_aliases")


def _decode(d):
    if "list" in d:
        return [_decode(t) for t in d["list"]]
    if "float" in d:
        return float(d["float"])
    return d


def _check(expr, got, want):
    if isinstance(want, list):
        assert len(got) == len(want), expr
        for g, w in zip(got, want):
            _check(expr, g, w)
        return
    if isinstance(want, float):
        assert (math.isnan(got) and math.isnan(want)) or got == want, expr
        return
    if "dtype" not in want:
        v = list(got) if isinstance(got, (list, tuple)) else got
        assert v == want["value"], expr
        return
    assert str(got.dtype).split(".")[-1] == want["dtype"], f"{expr}: dtype {got.dtype}"
    assert list(got.shape) == want["shape"], f"{expr}: shape {got.shape}"
    a = got.numpy()
    if "real" in want:
        np.testing.assert_allclose(a.real, want["real"], rtol=1e-6, err_msg=expr)
        np.testing.assert_allclose(a.imag, want["imag"], rtol=1e-6, err_msg=expr)
    else:
        np.testing.assert_allclose(np.asarray(a, dtype="float64"),
                                   np.asarray(want["value"], dtype="float64"),
                                   rtol=1e-3 if want["dtype"] in ("float16", "bfloat16") else 1e-6,
                                   err_msg=expr)


@pytest.mark.parametrize("expr", list(FIX["cases"]))
def test_value_matches_paddle(expr):
    import fw.nn.functional  # noqa: F401

    env = {"P": fw, "np": np}
    for k, v in FIX["inputs"].items():
        env[k] = fw.to_tensor(v, dtype="float32")
    got = eval(expr, env)  # noqa: S307 -- the fixture's own fixed expressions
    _check(expr, got, _decode(FIX["cases"][expr]))


def test_bad_inputs_name_the_function():
    x = fw.ones([2, 3])
    with pytest.raises(ValueError, match=r"addmm.*\[2, 3\].*\[2, 3\]"):
        fw.addmm(x, x, x)
    with pytest.raises(ValueError, match="as_complex.*last dimension"):
        fw.as_complex(x)
    with pytest.raises(TypeError, match="from_numpy.*list"):
        fw.from_numpy([1, 2])
    with pytest.raises(ValueError, match=r"add_n.*inputs\[1\]"):
        fw.add_n([x, fw.ones([3])])


def test_generated_wrapper_keeps_the_signature_semantics():
    def h(a, b=1, c=None, *, d, e=2):
        return (a, b, c, d, e)

    k = A.with_aliases(h, {"other": "c", "first": "a"}, "h")
    assert "<fw aliases of h>" in k.__code__.co_filename  # the generated (fast) wrapper
    assert k(1, d=4) == (1, 1, None, 4, 2)
    assert k(1, 2, other=3, d=4) == (1, 2, 3, 4, 2)
    assert k(first=0, d=1, e=5) == (0, 1, None, 1, 5)
    assert k(1, 2, None, d=0) == (1, 2, None, 0, 2)
    with pytest.raises(TypeError, match="missing required argument 'a'"):
        k(d=1)
    with pytest.raises(TypeError, match="required keyword-only argument: 'd'"):
        k(1)
    with pytest.raises(TypeError, match="got both 'c' and its alias 'other'"):
        k(1, 2, 3, other=4, d=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'zz'"):
        k(1, d=0, zz=1)
    # keywords as aliases (uniform_(from=…)) and **kwargs fall back to the generic wrapper
    g = A.with_aliases(lambda **kw: kw, {"from": "min"}, "u")
    assert g(**{"from": 1}) == {"min": 1}
