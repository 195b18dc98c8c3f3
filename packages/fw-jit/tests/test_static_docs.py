"""The examples in fw.static's docstrings run and print what they claim."""

import doctest
import importlib

import pytest

import fw

MODULES = ["fw.static.nn", "fw.static._layers", "fw.static._extras", "fw.static._state_io",
           "fw.static._program"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    mod = importlib.import_module(name)
    try:
        result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    finally:
        fw.disable_static()  # an example that fails half-way must not leave static mode on
    assert result.attempted > 0
    assert result.failed == 0
