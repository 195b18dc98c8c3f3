"""Paddle 3.3.1's own docstring examples of paddle.distribution, paddle.signal, the NAdam/
RAdam/Rprop/LBFGS optimizers and autograd.saved_tensors_hooks/Function (extracted into
fixtures/paddle_doc_examples.json by gen_paddle_doc_examples.py) run on fw with
``paddle`` aliased to ``fw``: names, argument names, module paths (``from
paddle.distribution.gumbel import Gumbel``) and call forms. Their values are random
draws or printed, so they are checked by the other test files, not here."""

import contextlib
import importlib
import importlib.abc
import importlib.util
import io
import json
import pathlib
import sys
import warnings

import pytest

EXAMPLES = json.loads((pathlib.Path(__file__).parent / "fixtures" / "paddle_doc_examples.json")
                      .read_text())


class _PaddleIsFw(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name == "paddle" or name.startswith("paddle."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("fw" + spec.name[len("paddle"):])

    def exec_module(self, module):
        pass


@pytest.fixture
def paddle_is_fw():
    import fw
    from fw.distribution import kl

    saved = {k: v for k, v in sys.modules.items() if k == "paddle" or k.startswith("paddle.")}
    # examples change global state (register_kl(Beta, Beta) with a dummy, the default
    # dtype): put it back for the tests that run after
    kl_table, dtype = dict(kl._REGISTER_TABLE), fw.get_default_dtype()
    finder = _PaddleIsFw()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        kl._REGISTER_TABLE.clear()
        kl._REGISTER_TABLE.update(kl_table)
        fw.set_default_dtype(dtype)
        sys.meta_path.remove(finder)
        for k in [k for k in sys.modules if k == "paddle" or k.startswith("paddle.")]:
            del sys.modules[k]
        sys.modules.update(saved)


@pytest.mark.parametrize("ex", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_paddle_example_runs(ex, paddle_is_fw, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        exec(compile(ex["src"], ex["name"], "exec"), {})
