"""The docstring examples of fw.distribution and of the NAdam/RAdam/Rprop/LBFGS modules
run and print what they claim (fw-nn's test_docs.py covers fw.nn)."""

import doctest
import importlib
import pkgutil

import pytest

import fw.distribution

MODULES = sorted(m.name for m in pkgutil.walk_packages(fw.distribution.__path__,
                                                       "fw.distribution.")) + [
    "fw.optimizer.nadam", "fw.optimizer.rprop", "fw.optimizer.lbfgs"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    if result.attempted == 0:
        pytest.skip(f"{name} has no docstring examples")
    assert result.failed == 0
