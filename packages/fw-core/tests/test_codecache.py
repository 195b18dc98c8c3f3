"""The cache of the generated op functions' compiled code (fw/core/ops/_codecache.py):
a hit compiles nothing; stale, foreign and damaged files are ignored; nothing is
written when bytecode writing is off or impossible. (Moved here from the root
tests/test_imports.py, which keeps the fresh-interpreter import checks, so that the
mutation runs of the core-ops area, which use this package's tests, see them.)"""

import importlib.util
import os
import sys


def test_code_cache_round_trip_compiles_nothing_the_second_time(tmp_path, monkeypatch):
    from fw.core.ops import _codecache

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = str(tmp_path / "__pycache__" / "gen.marshal")
    src = "def f(x, k=2):\n    return x * k\n"
    first = _codecache.CodeCache(path)
    code = first.compile(src, "<fw op f>")
    assert first.save() and os.path.exists(path)
    assert not first.save()  # nothing new compiled: no rewrite

    def no_compile(*a):
        raise AssertionError("a cache hit compiled")

    monkeypatch.setattr(_codecache, "_compile", no_compile)
    again = _codecache.CodeCache(path).compile(src, "<fw op f>")
    assert again.co_code == code.co_code and again.co_filename == "<fw op f>"
    ns = {}
    exec(again, ns)
    assert ns["f"](3) == 6


def test_code_cache_ignores_stale_foreign_and_damaged_files(tmp_path, monkeypatch):
    from fw.core.ops import _codecache

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = str(tmp_path / "gen.marshal")
    src = "def f():\n    return 1\n"
    c = _codecache.CodeCache(path)
    c.compile(src, "<fw op f>")
    c.save()
    compiled = []
    real = _codecache._compile
    monkeypatch.setattr(_codecache, "_compile", lambda *a: compiled.append(a[0]) or real(*a))
    # another source (the generator or the op table changed): a miss
    _codecache.CodeCache(path).compile(src.replace("1", "2"), "<fw op f>")
    assert compiled == [src.replace("1", "2")]
    # another interpreter's bytecode (other magic number), or garbage: ignored
    with open(path, "rb") as f:
        data = f.read()
    for bad in (data.replace(importlib.util.MAGIC_NUMBER, b"\0\0\r\n"), data[:40], b"junk"):
        with open(path, "wb") as f:
            f.write(bad)
        compiled.clear()
        ns = {}
        exec(_codecache.CodeCache(path).compile(src, "<fw op f>"), ns)
        assert compiled == [src] and ns["f"]() == 1


def test_code_cache_is_not_written_when_bytecode_writing_is_off_or_impossible(
        tmp_path, monkeypatch):
    from fw.core.ops import _codecache

    src = "def f():\n    return 1\n"
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    c = _codecache.CodeCache(str(tmp_path / "a.marshal"))
    c.compile(src, "<f>")
    assert not c.save() and not os.listdir(tmp_path)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    blocker = tmp_path / "file"
    blocker.write_text("")  # a file where the cache directory should be
    c = _codecache.CodeCache(str(blocker / "sub" / "a.marshal"))
    c.compile(src, "<f>")
    assert not c.save()


def test_code_cache_loaded_whole_is_not_rewritten(tmp_path, monkeypatch):
    # a cache that already holds every function this process uses is left alone
    from fw.core.ops import _codecache

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = str(tmp_path / "__pycache__" / "gen.marshal")
    src = "def f(x):\n    return x\n"
    first = _codecache.CodeCache(path)
    first.compile(src, "<fw op f>")
    assert first.save()
    before = os.stat(path).st_mtime_ns
    again = _codecache.CodeCache(path)
    again.compile(src, "<fw op f>")
    assert not again.save() and os.stat(path).st_mtime_ns == before
