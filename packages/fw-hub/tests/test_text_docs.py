"""The examples in fw.hub.text's docstrings run and print what they claim."""

import doctest
import importlib
import pkgutil

import pytest

import fw.hub.text

MODULES = sorted(m.name for m in pkgutil.walk_packages(fw.hub.text.__path__, "fw.hub.text."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    if result.attempted == 0:
        pytest.skip(f"{name} has no docstring examples")
    assert result.failed == 0
