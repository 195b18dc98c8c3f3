"""Helpers shared by fw-jit's tests."""

from __future__ import annotations

import importlib.util
import itertools

import numpy as np

import fw


def ops_of(static_fn) -> list:
    """Op names of the last program of a StaticFunction (nested blocks included)."""
    return [op.name for op in static_fn.program_cache.last().main_program.walk()]


def to_np(x):
    if isinstance(x, (list, tuple)):
        return [to_np(e) for e in x]
    if isinstance(x, dict):
        return {k: to_np(v) for k, v in x.items()}
    if isinstance(x, fw.Tensor):
        return x.numpy()
    return x


def assert_same(a, b, rtol=1e-6, atol=1e-6):
    """Eager and static results agree (nested structures, tensors by value)."""
    a, b = to_np(a), to_np(b)
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            assert_same(x, y, rtol, atol)
        return
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b)
        for k in a:
            assert_same(a[k], b[k], rtol, atol)
        return
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), (a, b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
        return
    assert a == b, (a, b)


def check(fn, *args, expect_ops=(), absent_ops=(), **kwargs):
    """Run `fn` eagerly and converted; the results agree. Returns the static fn."""
    eager = fn(*args, **kwargs)
    sf = fw.jit.to_static(fn, full_graph=True)
    static = sf(*args, **kwargs)
    assert_same(eager, static)
    names = ops_of(sf)
    for op in expect_ops:
        assert op in names, (op, names)
    for op in absent_ops:
        assert op not in names, (op, names)
    return sf


_module_ids = itertools.count()


def load_source(src: str, directory):
    """A module made from `src`, written to a real file in `directory` (fw.jit
    converts functions from their source file); it imports fw."""
    path = directory / f"generated_{next(_module_ids)}.py"
    path.write_text("import fw\n\n\n" + src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
