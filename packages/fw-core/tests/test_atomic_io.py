"""fw.core.atomic_io: the one atomic-write implementation (model files and fw.save)."""

import os

import pytest

from fw.core.atomic_io import atomic_path


def _write(path, data):
    with atomic_path(path) as tmp:
        assert os.path.dirname(tmp) == os.path.dirname(os.path.abspath(path))
        with open(tmp, "wb") as f:
            f.write(data)


def test_replaces_the_file_and_leaves_no_temporary(tmp_path):
    p = tmp_path / "f.bin"
    _write(p, b"one")
    _write(p, b"two")
    assert p.read_bytes() == b"two"
    assert os.listdir(tmp_path) == ["f.bin"]


@pytest.mark.parametrize("exc", [OSError("disk full"), KeyboardInterrupt()])
def test_a_failure_in_the_body_keeps_the_previous_file(tmp_path, exc):
    p = tmp_path / "f.bin"
    _write(p, b"old")
    with pytest.raises(type(exc)):
        with atomic_path(p) as tmp:
            with open(tmp, "wb") as f:
                f.write(b"half")
            raise exc
    assert p.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["f.bin"]


def test_a_failed_fsync_or_rename_keeps_the_previous_file(tmp_path, monkeypatch):
    p = tmp_path / "f.bin"
    _write(p, b"old")
    for name in ("fsync", "replace"):
        def boom(*a, _name=name, **k):
            raise OSError(f"{_name} failed (simulated)")

        monkeypatch.setattr(os, name, boom)
        with pytest.raises(OSError, match=name):
            _write(p, b"new")
        monkeypatch.undo()
        assert p.read_bytes() == b"old"
        assert os.listdir(tmp_path) == ["f.bin"]


def test_parents_are_created_only_on_request(tmp_path):
    p = tmp_path / "a" / "b" / "f.bin"
    with pytest.raises(FileNotFoundError):
        _write(p, b"x")
    with atomic_path(p, make_parents=True) as tmp:
        with open(tmp, "wb") as f:
            f.write(b"x")
    assert p.read_bytes() == b"x"


def test_the_new_file_gets_the_umask_mode(tmp_path):
    old = os.umask(0o022)
    try:
        _write(tmp_path / "f.bin", b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "f.bin").stat().st_mode & 0o777 == 0o644
