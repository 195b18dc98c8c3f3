"""The examples in fw.hub's and fw.utils.download's docstrings run and print what they
claim (they use loopback servers and temporary directories only)."""

import doctest
import importlib
import os
import pkgutil

import pytest

import fw.hub

MODULES = sorted(m.name for m in pkgutil.walk_packages(fw.hub.__path__, "fw.hub.")
                 if ".text" not in m.name) + ["fw.utils.download"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    for v in ("FW_HUB_OFFLINE", "HF_HUB_OFFLINE", "FW_HUB_MIRRORS"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("FW_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    if result.attempted == 0:
        pytest.skip(f"{name} has no docstring examples")
    assert result.failed == 0
    # examples that set variables put the environment back
    assert os.environ.get("FW_HUB_MIRRORS") is None
    assert os.environ["FW_HUB_CACHE"] == str(tmp_path / "hub")
