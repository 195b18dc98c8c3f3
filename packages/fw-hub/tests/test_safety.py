"""Fuzzed safety properties of fw-hub (hypothesis; fast): hostile PyTorch checkpoints,
corrupted zips, truncated downloads, wrong hashes and archive path traversal all end in
clear errors — no code runs (a sentinel file is never created), nothing lands outside
its directory, and the cache keeps only verified files."""

import hashlib
import io
import os
import pickle
import tarfile
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fw.hub import download as dl
from fw.hub import load_state_dict, torch_pickle
from fw.hub.archive import extract_all
from fw.hub.errors import ChecksumError, DownloadError, UnsafeArchiveError
from fw.hub.testing import serve_directory, write_torch_checkpoint
from fw.nn.safe_pickle import UnsafePickleError

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow,
                                       HealthCheck.function_scoped_fixture])

HOSTILE = [("os", "system"), ("posix", "system"), ("builtins", "eval"), ("builtins", "exec"),
           ("builtins", "getattr"), ("subprocess", "check_call"), ("numpy", "load"),
           ("torch", "load"), ("torch.nn.modules.linear", "Linear"),
           ("torch._utils", "_rebuild_device_tensor_from_numpy"), ("torch", "UntypedStorage"),
           ("__main__", "Evil"), ("collections", "defaultdict"), ("functools", "partial")]


class _Fake:
    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *a):
        raise AssertionError("never called")


class _Call:
    def __init__(self, module, name, args):
        self.fake, self.args = _Fake(module, name), args

    def __reduce__(self):
        return (self.fake, self.args)


class _Pickler(pickle._Pickler):
    """Writes `_Fake` as GLOBAL opcodes without importing anything (an attacker's file)."""

    def save_fake(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[_Fake] = save_fake


def _hostile_zip(path, module, name, sentinel, nest):
    write_torch_checkpoint(path, {"w": np.ones(2, np.float32)}, archive_name="archive")
    buf = io.BytesIO()
    _Pickler(buf, protocol=2).dump(nest(_Call(module, name, (f"touch {sentinel}",))))
    with zipfile.ZipFile(path) as z:
        records = {n: z.read(n) for n in z.namelist()}
    records["archive/data.pkl"] = buf.getvalue()
    with zipfile.ZipFile(path, "w") as z:
        for n, data in records.items():
            z.writestr(n, data)


_NEST = st.sampled_from([lambda x: x, lambda x: {"a": x}, lambda x: [1, {"b": (x,)}],
                         lambda x: {"w": np.zeros(1), "deep": [[[x]]]}])


@FAST
@given(target=st.sampled_from(HOSTILE), nest=_NEST)
def test_hostile_torch_checkpoints_never_run(tmp_path, target, nest):
    module, name = target
    sentinel = tmp_path / "pwned"
    p = tmp_path / "evil.bin"
    _hostile_zip(p, module, name, sentinel, nest)
    with pytest.raises(UnsafePickleError, match=f"{module}.{name}"):
        torch_pickle.load(str(p))
    import fw

    with pytest.raises(UnsafePickleError):
        load_state_dict(fw.nn.Linear(2, 2), str(p))
    assert not sentinel.exists()


@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_corrupted_torch_zips_fail_cleanly(data):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "m.bin")
        write_torch_checkpoint(p, {"a": np.arange(6, dtype=np.float32).reshape(2, 3),
                                   "b": np.ones(3, np.int64), "meta": {"k": [1, 2]}})
        raw = bytearray(Path(p).read_bytes())
        if data.draw(st.booleans()):
            raw = raw[:data.draw(st.integers(0, len(raw) - 1))]  # truncated
        else:
            for _ in range(data.draw(st.integers(1, 6))):
                raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
        Path(p).write_bytes(bytes(raw))
        try:
            out = torch_pickle.load(p)
        except ValueError as e:  # UnsafePickleError is one; so are corrupted-zip errors
            assert "m.bin" in str(e)
            return
        assert isinstance(out, dict)  # a flip that missed everything important


def test_tensor_views_out_of_storage_refused(tmp_path):
    # a forged size/stride reaching past the storage must not read neighbouring memory
    p = tmp_path / "m.bin"
    write_torch_checkpoint(p, {"w": np.ones(4, np.float32)}, archive_name="archive")
    with zipfile.ZipFile(p) as z:
        records = {n: z.read(n) for n in z.namelist()}
    pkl = records["archive/data.pkl"]
    forged = pkl.replace(b"K\x04\x85", b"M\x00\x10\x85")  # size (4,) -> (4096,)
    assert forged != pkl
    records["archive/data.pkl"] = forged
    with zipfile.ZipFile(p, "w") as z:
        for n, data in records.items():
            z.writestr(n, data)
    with pytest.raises(UnsafePickleError, match="reaches element"):
        torch_pickle.load(str(p))


PAYLOAD = os.urandom(200_000)
SHA = hashlib.sha256(PAYLOAD).hexdigest()


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, len(PAYLOAD) - 1), retries=st.integers(0, 2))
def test_truncated_downloads_never_poison_the_cache(monkeypatch, cut, retries):
    monkeypatch.setattr(dl, "_RETRIES", retries)
    with tempfile.TemporaryDirectory() as d:
        src, out = Path(d, "src"), Path(d, "out")
        src.mkdir()
        (src / "w.bin").write_bytes(PAYLOAD)
        with serve_directory(src) as base:
            base.cut_after = cut
            try:
                p = dl.download_url(base + "/w.bin", out, sha256=SHA, progress=False)
            except DownloadError:
                assert not (out / "w.bin").exists()
                p = dl.download_url(base + "/w.bin", out, sha256=SHA, progress=False)
        assert Path(p).read_bytes() == PAYLOAD


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(wrong=st.text("0123456789abcdef", min_size=64, max_size=64).filter(lambda s: s != SHA),
       corrupt_at=st.integers(0, len(PAYLOAD) - 1))
def test_wrong_hash_or_corrupted_body_fails_closed(wrong, corrupt_at):
    with tempfile.TemporaryDirectory() as d:
        src, out = Path(d, "src"), Path(d, "out")
        src.mkdir()
        out.mkdir()
        (out / "keep.bin").write_bytes(b"cached")
        bad = bytearray(PAYLOAD)
        bad[corrupt_at] ^= 0xFF
        (src / "w.bin").write_bytes(bytes(bad))
        with serve_directory(src) as base:
            with pytest.raises(ChecksumError, match=f"expected {SHA}"):
                dl.download_url(base + "/w.bin", out, sha256=SHA, progress=False)
            (src / "w.bin").write_bytes(PAYLOAD)
            with pytest.raises(ChecksumError, match=f"expected {wrong}"):
                dl.download_url(base + "/w.bin", out, sha256=wrong, progress=False)
        assert sorted(p.name for p in out.iterdir()) == [".locks", "keep.bin"]
        assert (out / "keep.bin").read_bytes() == b"cached"


_PART = st.sampled_from(["a", "b", "..", ".", "", "x.txt", "C:", "/", "\\", "..\\..", "d/"])


def _outside_files(root, allowed):
    found = []
    for dirpath, _, files in os.walk(root):
        if any(dirpath == a or dirpath.startswith(a + os.sep) for a in allowed):
            continue
        found += [os.path.join(dirpath, f) for f in files]
    return found


@settings(max_examples=80, deadline=None)
@given(names=st.lists(st.lists(_PART, min_size=1, max_size=4).map("/".join), min_size=1,
                      max_size=4, unique=True),
       kind=st.sampled_from(["zip", "tar"]))
def test_fuzzed_archive_names_stay_inside(names, kind):
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        arc = root / f"a.{kind}"
        if kind == "zip":
            with zipfile.ZipFile(arc, "w") as z:
                for n in names:
                    z.writestr(n if n else "empty", "x")
        else:
            with tarfile.open(arc, "w") as t:
                for n in names:
                    info = tarfile.TarInfo(n if n else "empty")
                    info.size = 1
                    t.addfile(info, io.BytesIO(b"x"))
        dest = root / "deep" / "dest"
        try:
            extract_all(arc, dest)
        except (UnsafeArchiveError, ValueError, OSError):
            assert not dest.exists() or not any(dest.iterdir())
        assert _outside_files(root, [str(dest)]) == [str(arc)]


@settings(max_examples=40, deadline=None)
@given(target=st.sampled_from(["../../escape", "/etc/passwd", "../x", "a/../../y",
                               "sub/../../../z", "ok.txt", "sub/ok.txt"]),
       hard=st.booleans())
def test_fuzzed_tar_links(target, hard):
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        arc = root / "l.tar"
        with tarfile.open(arc, "w") as t:
            for n in ("ok.txt", "sub/ok.txt"):
                info = tarfile.TarInfo(n)
                info.size = 1
                t.addfile(info, io.BytesIO(b"x"))
            link = tarfile.TarInfo("sub/link")
            link.type = tarfile.LNKTYPE if hard else tarfile.SYMTYPE
            link.linkname = target
            t.addfile(link)
        dest = root / "dest"
        try:
            extract_all(arc, dest)
        except (UnsafeArchiveError, ValueError, OSError):
            assert not dest.exists() or not any(dest.iterdir())
        else:
            real = os.path.realpath(dest / "sub" / "link")
            assert real.startswith(os.path.realpath(dest) + os.sep)
        assert _outside_files(root, [str(dest)]) == [str(arc)]
