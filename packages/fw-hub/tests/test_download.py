"""fw.hub.download / fw.utils.download against a loopback server: offline-first, mirrors,
atomic + resumable + locked downloads, hash checks, safe archive extraction."""

import hashlib
import io
import os
import tarfile
import threading
import time
import zipfile
from pathlib import Path

import pytest

from fw.hub import download as dl
from fw.hub._lock import FileLock
from fw.hub.archive import extract_all
from fw.hub.errors import (
    ChecksumError,
    DownloadError,
    LockTimeoutError,
    OfflineError,
    UnsafeArchiveError,
)
from fw.hub.testing import serve_directory
from fw.utils.download import get_path_from_url, get_weights_path_from_url

PAYLOAD = bytes(range(256)) * 4096 + b"tail"  # 1 MiB + 4 bytes: several chunks
SHA = hashlib.sha256(PAYLOAD).hexdigest()
MD5 = hashlib.md5(PAYLOAD).hexdigest()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    for v in ("FW_HUB_OFFLINE", "HF_HUB_OFFLINE", "FW_HUB_MIRRORS", "FW_HOME"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("FW_HUB_CACHE", str(tmp_path / "hubcache"))


@pytest.fixture
def server(tmp_path):
    src = tmp_path / "srv"
    src.mkdir()
    (src / "w.bin").write_bytes(PAYLOAD)
    with serve_directory(src) as base:
        base.src = src
        yield base


def _gets(base):
    return [r for r in base.requests if r[0] == "GET"]


def test_download_verifies_and_is_offline_first(server, tmp_path):
    out = tmp_path / "out"
    p = dl.download_url(server + "/w.bin", out, sha256=SHA, md5=MD5, progress=False)
    assert Path(p).read_bytes() == PAYLOAD
    assert len(_gets(server)) == 1
    # a cached file never touches the network, hash given or not
    assert dl.download_url(server + "/w.bin", out, sha256=SHA, progress=False) == p
    assert dl.download_url(server + "/w.bin", out, progress=False) == p
    assert len(_gets(server)) == 1
    assert not [f for f in os.listdir(out) if f.endswith((".incomplete", ".json"))]


def test_sha256_prefix_accepted(server, tmp_path):
    p = dl.download_url(server + "/w.bin", tmp_path / "o", sha256=SHA[:8], progress=False)
    assert os.path.getsize(p) == len(PAYLOAD)


def test_wrong_sha256_fails_closed_and_keeps_cache(server, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ChecksumError) as ei:
        dl.download_url(server + "/w.bin", out, sha256="0" * 64, progress=False)
    msg = str(ei.value)
    assert "expected " + "0" * 64 in msg and "got " + SHA in msg
    assert not [f for f in os.listdir(out) if f != ".locks"]  # partial deleted
    # a good cached copy stays untouched when a refreshed download is bad
    good = dl.download_url(server + "/w.bin", out, sha256=SHA, progress=False)
    (server.src / "w.bin").write_bytes(b"tampered" + PAYLOAD[8:])
    with pytest.raises(ChecksumError):
        dl.fetch(server + "/w.bin", good, sha256=SHA, force=True, progress=False)
    assert Path(good).read_bytes() == PAYLOAD


def test_wrong_md5_message(server, tmp_path):
    with pytest.raises(ChecksumError, match="md5 mismatch: expected 0{32}, got " + MD5):
        dl.download_url(server + "/w.bin", tmp_path, md5="0" * 32, progress=False)


def test_cached_file_with_wrong_hash_is_refetched(server, tmp_path):
    (tmp_path / "w.bin").write_bytes(b"corrupted")
    p = dl.download_url(server + "/w.bin", tmp_path, sha256=SHA, progress=False)
    assert Path(p).read_bytes() == PAYLOAD


def test_offline_miss_names_url_and_path(server, tmp_path, monkeypatch):
    for var in ("FW_HUB_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.setenv(var, "1")
        with pytest.raises(OfflineError) as ei:
            dl.download_url(server + "/w.bin", tmp_path / "o", progress=False)
        assert server + "/w.bin" in str(ei.value)
        assert str(tmp_path / "o" / "w.bin") in str(ei.value)
        monkeypatch.delenv(var)
    assert _gets(server) == []
    # offline, a cached file is still served
    dl.download_url(server + "/w.bin", tmp_path / "o", progress=False)
    monkeypatch.setenv("FW_HUB_OFFLINE", "1")
    assert dl.download_url(server + "/w.bin", tmp_path / "o", sha256=SHA, progress=False)


def test_offline_cached_file_with_wrong_hash_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "w.bin").write_bytes(b"corrupted")
    monkeypatch.setenv("FW_HUB_OFFLINE", "1")
    with pytest.raises(ChecksumError, match="offline"):
        dl.download_url("https://example.invalid/w.bin", tmp_path, sha256=SHA, progress=False)


def test_mirrors_rewrite(server, tmp_path, monkeypatch):
    monkeypatch.setenv("FW_HUB_MIRRORS",
                       f"https://nowhere.invalid/x/={server}/nope/,"
                       f"https://paddle-hapi.bj.bcebos.com/models/={server}/")
    p = dl.download_url("https://paddle-hapi.bj.bcebos.com/models/w.bin", tmp_path,
                        sha256=SHA, progress=False)
    assert Path(p).read_bytes() == PAYLOAD
    assert _gets(server)[0][1] == "/w.bin"
    monkeypatch.setenv("FW_HUB_MIRRORS", "no-equals-sign")
    with pytest.raises(ValueError, match="FW_HUB_MIRRORS"):
        dl.apply_mirrors("https://a/b")


def test_resume_after_cut_connection(server, tmp_path):
    server.cut_after = 300_000  # the first response stops early; the next resumes
    p = dl.download_url(server + "/w.bin", tmp_path, sha256=SHA, progress=False)
    assert Path(p).read_bytes() == PAYLOAD
    gets = _gets(server)
    assert len(gets) == 2 and gets[1][2] == "bytes=300000-"


def test_resume_from_partial_file_left_by_a_crash(server, tmp_path):
    # a previous process died after 500000 bytes: its partial and validator are there
    dest = tmp_path / "w.bin"
    server.cut_after = 500_000
    dl._RETRIES, saved = 0, dl._RETRIES
    try:
        with pytest.raises(DownloadError, match="cut off"):
            dl.download_url(server + "/w.bin", tmp_path, sha256=SHA, progress=False)
    finally:
        dl._RETRIES = saved
    assert os.path.getsize(str(dest) + ".incomplete") == 500_000
    assert not dest.exists()
    p = dl.download_url(server + "/w.bin", tmp_path, sha256=SHA, progress=False)
    assert Path(p).read_bytes() == PAYLOAD
    assert _gets(server)[-1][2] == "bytes=500000-"


def test_partial_of_a_changed_file_restarts(server, tmp_path):
    # If-Range: the server's file changed since the partial was fetched -> full body
    server.cut_after = 400_000
    dl._RETRIES, saved = 0, dl._RETRIES
    try:
        with pytest.raises(DownloadError):
            dl.download_url(server + "/w.bin", tmp_path, progress=False)
    finally:
        dl._RETRIES = saved
    new = b"Z" * 700_000
    (server.src / "w.bin").write_bytes(new)
    os.utime(server.src / "w.bin", (time.time() + 5, time.time() + 5))
    p = dl.download_url(server + "/w.bin", tmp_path, sha256=hashlib.sha256(new).hexdigest(),
                        progress=False)
    assert Path(p).read_bytes() == new


def test_http_errors_and_unreachable(server, tmp_path):
    with pytest.raises(DownloadError, match="HTTP 404"):
        dl.download_url(server + "/missing.bin", tmp_path, progress=False)
    server.fail_status = 503
    with pytest.raises(DownloadError, match="HTTP 503"):
        dl.download_url(server + "/w.bin", tmp_path, progress=False)
    assert not (tmp_path / "w.bin").exists()
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with pytest.raises(DownloadError, match="cannot reach"):
        dl.download_url(f"http://127.0.0.1:{port}/w.bin", tmp_path, progress=False,
                        timeout=5)


def test_stalled_server_times_out(tmp_path):
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    conns = []

    def accept():  # accepts, reads the request, never answers
        c, _ = srv.accept()
        conns.append(c)
        c.recv(4096)

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(DownloadError, match="timed out"):
            dl.download_url(f"http://127.0.0.1:{srv.getsockname()[1]}/w.bin", tmp_path,
                            progress=False, timeout=0.5)
    finally:
        for c in conns:
            c.close()
        srv.close()
        t.join(5)
    assert time.monotonic() - t0 < 10


def test_non_http_url_refused(tmp_path):
    with pytest.raises(ValueError, match="http"):
        dl.download_url("file:///etc/passwd", tmp_path, progress=False)


_HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)  # what FileLock does, in a light process
os.write(fd, str(os.getpid()).encode())
print("ready", flush=True)
sys.stdin.read()
"""


def test_lock_timeout_names_holder_pid_and_dies_with_it(tmp_path):
    import select
    import subprocess
    import sys

    lock = tmp_path / ".locks" / "w.bin.lock"
    lock.parent.mkdir()
    p = subprocess.Popen([sys.executable, "-c", _HOLDER, str(lock)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([p.stdout], [], [], 60)
        assert ready and p.stdout.readline().strip() == "ready"
        t0 = time.monotonic()
        with pytest.raises(LockTimeoutError, match=f"held by pid {p.pid}"):
            with FileLock(str(lock), timeout=0.3):
                pass
        assert time.monotonic() - t0 < 10
        p.kill()  # a crashed holder: the kernel drops its lock
        p.wait(30)
        with FileLock(str(lock), timeout=10):
            pass
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(30)
        p.stdin.close()
        p.stdout.close()


def test_concurrent_loaders_download_once(server, tmp_path):
    results, errors = [], []

    def load():
        try:
            results.append(dl.download_url(server + "/w.bin", tmp_path, sha256=SHA,
                                           progress=False))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and len(set(results)) == 1
    assert len(_gets(server)) == 1
    assert Path(results[0]).read_bytes() == PAYLOAD


def test_get_weights_path_from_url_uses_hub_cache(server, tmp_path, monkeypatch):
    monkeypatch.setenv("FW_HUB_MIRRORS", f"https://paddle-hapi.bj.bcebos.com/models/={server}/")
    p = get_weights_path_from_url("https://paddle-hapi.bj.bcebos.com/models/w.bin", MD5)
    assert p == str(tmp_path / "hubcache" / "weights" / "w.bin")
    import fw.utils.download as fud

    assert fud.WEIGHTS_HOME == str(tmp_path / "hubcache" / "weights")
    monkeypatch.delenv("FW_HUB_CACHE")
    monkeypatch.setenv("FW_HOME", str(tmp_path / "home"))
    p = get_weights_path_from_url("https://paddle-hapi.bj.bcebos.com/models/w.bin")
    assert p == str(tmp_path / "home" / "hub" / "weights" / "w.bin")
    with pytest.raises(ChecksumError):
        get_path_from_url(server + "/w.bin", tmp_path / "x", md5sum="1" * 32)


def _zip(path, members):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


def test_get_path_from_url_decompress_rules(server, tmp_path):
    _zip(server.src / "single_dir.zip", {"d/a.txt": "a", "d/sub/b.txt": "b"})
    _zip(server.src / "mixed.zip", {"a.txt": "a", "b/c.txt": "c"})
    _zip(server.src / "one.zip", {"w.pdparams": "w"})
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        info = tarfile.TarInfo("set/x.txt")
        info.size = 1
        t.addfile(info, io.BytesIO(b"x"))
    (server.src / "set.tar.gz").write_bytes(buf.getvalue())
    root = tmp_path / "root"
    assert get_path_from_url(server + "/single_dir.zip", root) == str(root / "d")
    assert Path(root / "d" / "sub" / "b.txt").read_text() == "b"
    assert get_path_from_url(server + "/mixed.zip", root) == str(root / "mixed")
    assert sorted(os.listdir(root / "mixed")) == ["a.txt", "b"]
    assert get_path_from_url(server + "/one.zip", root) == str(root / "w.pdparams")
    assert get_path_from_url(server + "/set.tar.gz", root) == str(root / "set")
    assert Path(root / "set" / "x.txt").read_text() == "x"
    assert get_path_from_url(server + "/set.tar.gz", root, decompress=False) == str(
        root / "set.tar.gz")
    n = len(_gets(server))
    get_path_from_url(server + "/single_dir.zip", root)  # cached: no request
    assert len(_gets(server)) == n
    get_path_from_url(server + "/single_dir.zip", root, check_exist=False)
    assert len(_gets(server)) == n + 1
    with pytest.raises(ValueError, match="not an http"):
        get_path_from_url("/local/file.zip", root)


def _tar(path, infos):
    with tarfile.open(path, "w") as t:
        for info, data in infos:
            t.addfile(info, io.BytesIO(data) if data is not None else None)


def _ti(name, type_=tarfile.REGTYPE, size=0, linkname=""):
    i = tarfile.TarInfo(name)
    i.type, i.size, i.linkname = type_, size, linkname
    return i


@pytest.mark.parametrize("member,why", [
    (_ti("../evil.txt", size=1), "path traversal"),
    (_ti("/abs/evil.txt", size=1), "absolute"),
    (_ti("ok/../../evil.txt", size=1), "path traversal"),
    (_ti("link", tarfile.SYMTYPE, linkname="../../etc/passwd"), "outside"),
    (_ti("link", tarfile.SYMTYPE, linkname="/etc/passwd"), "absolute"),
    (_ti("a/link", tarfile.LNKTYPE, linkname="../outside"), "outside"),
    (_ti("dev", tarfile.CHRTYPE), "device"),
    (_ti("fifo", tarfile.FIFOTYPE), "device"),
])
def test_tar_unsafe_members_refused(tmp_path, member, why):
    arc = tmp_path / "bad.tar"
    good = _ti("good.txt", size=1)
    _tar(arc, [(good, b"g"), (member, b"e" if member.size else None)])
    out = tmp_path / "out"
    with pytest.raises(UnsafeArchiveError, match=why):
        extract_all(arc, out)
    assert not out.exists() or os.listdir(out) == []  # nothing extracted
    assert not (tmp_path / "evil.txt").exists()


@pytest.mark.parametrize("name", ["../evil.txt", "/abs.txt", "a/../../evil.txt",
                                  "..\\evil.txt", "C:/evil.txt"])
def test_zip_unsafe_names_refused(tmp_path, name):
    arc = tmp_path / "bad.zip"
    _zip(arc, {"good.txt": "g", name: "e"})
    with pytest.raises(UnsafeArchiveError):
        extract_all(arc, tmp_path / "out")
    assert not (tmp_path / "out").exists() or os.listdir(tmp_path / "out") == []
    assert not (tmp_path / "evil.txt").exists()


def _zip_symlink(z, name, target):
    info = zipfile.ZipInfo(name)
    info.external_attr = (0o120777 << 16)
    z.writestr(info, target)


def test_zip_symlinks(tmp_path):
    arc = tmp_path / "links.zip"
    with zipfile.ZipFile(arc, "w") as z:
        z.writestr("d/real.txt", "r")
        _zip_symlink(z, "d/alias.txt", "real.txt")
    extract_all(arc, tmp_path / "out")
    assert os.path.islink(tmp_path / "out" / "d" / "alias.txt")
    assert Path(tmp_path / "out" / "d" / "alias.txt").read_text() == "r"
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as z:
        _zip_symlink(z, "d/esc", "../../outside")
    with pytest.raises(UnsafeArchiveError, match="outside"):
        extract_all(bad, tmp_path / "out2")


def test_safe_tar_links_inside_are_kept(tmp_path):
    arc = tmp_path / "ok.tar"
    _tar(arc, [(_ti("d/real.txt", size=1), b"r"),
               (_ti("d/alias", tarfile.SYMTYPE, linkname="real.txt"), None)])
    assert extract_all(arc, tmp_path / "out") == ["d"]
    assert Path(tmp_path / "out" / "d" / "alias").read_text() == "r"


def test_planted_symlink_in_weights_cache_refused(server, tmp_path):
    from fw.hub.errors import UnsafeCacheError

    secret = tmp_path / "secret"
    secret.write_bytes(b"not weights")
    weights = tmp_path / "hubcache" / "weights"
    weights.mkdir(parents=True)
    os.symlink(secret, weights / "w.bin")
    with pytest.raises(UnsafeCacheError, match="outside the cache"):
        get_weights_path_from_url(server + "/w.bin")
    assert _gets(server) == []
    # a link inside the cache is fine
    os.remove(weights / "w.bin")
    (weights / "real.bin").write_bytes(PAYLOAD)
    os.symlink(weights / "real.bin", weights / "w.bin")
    assert get_weights_path_from_url(server + "/w.bin", MD5) == str(weights / "w.bin")


def test_unverifiable_partial_from_an_earlier_call_restarts(server, tmp_path):
    # a partial whose server gave no ETag/Last-Modified cannot be checked with If-Range:
    # resuming it could splice two versions of the file, so it is fetched from the start
    import json

    url = server + "/w.bin"
    (tmp_path / "w.bin.incomplete").write_bytes(b"stale bytes of an older version")
    (tmp_path / "w.bin.incomplete.json").write_text(json.dumps({"url": url,
                                                                "validator": None}))
    p = dl.download_url(url, tmp_path, progress=False)  # no hash given: nothing else checks
    assert Path(p).read_bytes() == PAYLOAD
    assert _gets(server)[0][2] is None  # no Range request
