"""The rendered op docstrings kept between processes (fw/core/ops/docs/_cache.py): a current
file is used, any change of the doc modules or of an op's declaration misses, a damaged or
foreign file is ignored, and the live docstrings equal a fresh render (no stale text)."""

from __future__ import annotations

import sys

import fw
from fw.core.ops import OPS, _api
from fw.core.ops import docs as D
from fw.core.ops.docs import _cache


def _docs_dir(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    (d / "__init__.py").write_text("# renderer\n")
    (d / "elementwise.py").write_text("DOCS = {}\n")
    return d


def test_saved_texts_are_read_back_only_for_the_same_doc_modules_and_declaration(
        tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # CI may set PYTHONDONTWRITEBYTECODE
    d = _docs_dir(tmp_path)
    path = str(tmp_path / "cache.marshal")
    op = OPS["add"]
    fp = _cache.fingerprint(op)
    c = _cache.DocCache(path, str(d))
    assert not c.valid and c.get(("fn", "add", "add", "add"), fp) is None
    c.put(("fn", "add", "add", "add"), fp, "the text")
    assert c.save({"add"})
    c2 = _cache.DocCache(path, str(d))
    assert c2.valid and c2.ops == {"add"}
    assert c2.get(("fn", "add", "add", "add"), fp) == "the text"
    # the op's declaration changed (another summary): a miss
    changed = (op.doc + " changed",) + fp[1:]
    assert c2.get(("fn", "add", "add", "add"), changed) is None
    # a doc module changed: the whole file is stale
    (d / "elementwise.py").write_text("DOCS = {'add': None}\n")
    assert not _cache.DocCache(path, str(d)).valid


def test_a_damaged_or_foreign_file_is_ignored_and_nothing_is_written_without_bytecode(
        tmp_path, monkeypatch):
    d = _docs_dir(tmp_path)
    path = tmp_path / "cache.marshal"
    path.write_bytes(b"not a cache at all")
    assert not _cache.DocCache(str(path), str(d)).valid
    path.write_bytes(_cache._HEADER + b"\x00garbage")
    assert not _cache.DocCache(str(path), str(d)).valid
    c = _cache.DocCache(str(tmp_path / "other.marshal"), str(d))
    c.put(("fn", "x", "x", None), ("fp",), "t")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert not c.save({"x"})
    assert not (tmp_path / "other.marshal").exists()


def test_live_docstrings_equal_a_fresh_render():
    table = D.load()
    checked = 0
    for name, doc in table.items():
        op = OPS[name]
        key = op.api if isinstance(op.api, str) else op.name
        fn = _api.FUNCTIONS.get(key)
        fn = getattr(fn, "__wrapped__", fn)  # Paddle's argument-alias wrapper
        if fn is None or getattr(fn, "op", None) is not op or _api.PUBLIC.get(key) is fn:
            continue
        fname = key.rsplit(".", 1)[-1]
        mname = (op.method if isinstance(op.method, str) else fname) if op.method else None
        method = mname if getattr(_api.METHODS.get(mname), "__wrapped__",
                                  _api.METHODS.get(mname)) is fn else None
        assert fn.__doc__ == D.render(op, doc, fname, method), name
        checked += 1
    assert checked > 150
    assert fw.sin_.__doc__ == D.render_inplace(OPS["sin"], table["sin"], "sin_", "sin")
