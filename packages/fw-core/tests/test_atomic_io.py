"""fw.core.atomic_io: the one atomic-write implementation (model files and fw.save)."""

import os

import pytest

from fw.core import atomic_io
from fw.core.atomic_io import atomic_path


def _write(path, data):
    with atomic_path(path) as tmp:
        assert os.path.dirname(tmp) == os.path.dirname(os.path.realpath(path))
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


@pytest.mark.parametrize("umask", [0o077, 0o002])
def test_the_mode_follows_any_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        _write(tmp_path / "f.bin", b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "f.bin").stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_symlink_keeps_being_a_link_and_its_target_is_written(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "f.bin"
    target.write_bytes(b"old")
    link = tmp_path / "link.bin"
    link.symlink_to(target)
    _write(link, b"new")
    assert link.is_symlink() and target.read_bytes() == b"new"
    assert sorted(os.listdir(tmp_path / "real")) == ["f.bin"]
    dangling = tmp_path / "dangling.bin"
    dangling.symlink_to(tmp_path / "real" / "g.bin")
    _write(dangling, b"g")
    assert dangling.is_symlink() and (tmp_path / "real" / "g.bin").read_bytes() == b"g"


def _dead_pid():
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid  # reaped: no process has it (a reuse within this test is not plausible)


def _temp_name(target, host, pid, rnd="0123456789ab"):
    return os.path.join(os.path.dirname(target),
                        f".{os.path.basename(target)}.fwtmp-{host}-{pid}-{rnd}.tmp")


def test_stale_temporaries_of_dead_writers_are_removed_on_the_next_save(tmp_path):
    import fcntl

    p = str(tmp_path / "f.bin")
    host = atomic_io._host()
    dead = _dead_pid()
    stale = _temp_name(p, host, dead)
    live = _temp_name(p, host, os.getppid(), "aaaaaaaaaaaa")  # a live process
    other_host = _temp_name(p, "ffffffff" if host != "ffffffff" else "eeeeeeee", dead,
                            "bbbbbbbbbbbb")
    other_target = _temp_name(str(tmp_path / "g.bin"), host, dead)
    locked = _temp_name(p, host, dead, "cccccccccccc")  # dead pid, but someone writes it
    user_file = str(tmp_path / ".f.bin.tmp")  # not a temporary name of ours
    for f in (stale, live, other_host, other_target, locked, user_file):
        with open(f, "wb") as fh:
            fh.write(b"x" * 100)
    fd = os.open(locked, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert stale in atomic_io.temp_files_of(p)
        _write(p, b"new")
    finally:
        os.close(fd)
    left = set(os.listdir(tmp_path))
    assert os.path.basename(stale) not in left
    for f in (live, other_host, other_target, locked, user_file):
        assert os.path.basename(f) in left, f
    assert (tmp_path / "f.bin").read_bytes() == b"new"


def test_a_long_target_name_gets_a_valid_temporary_name(tmp_path):
    p = tmp_path / ("n" * 250)
    _write(p, b"x")
    assert p.read_bytes() == b"x" and os.listdir(tmp_path) == [p.name]
