"""Downloading one URL into the cache: atomic, resumable, locked, verified, offline-first.

- **Offline first**: a file already at its destination is returned without any network
  call (its hash is checked when known). ``FW_HUB_OFFLINE=1`` (or Hugging Face's
  ``HF_HUB_OFFLINE=1``) turns a miss into `OfflineError` naming the URL and the path to
  place the file at.
- **Mirrors**: ``FW_HUB_MIRRORS="prefixA=replacementA,prefixB=replacementB"`` rewrites
  every URL by the first matching prefix before anything is fetched (air-gapped mirrors).
- **Atomic**: bytes go to ``<dest>.incomplete``; only a complete, verified file is renamed
  (``os.replace``) onto ``<dest>``, so a reader never sees a partial file and a failed or
  corrupted download never replaces a good cached one.
- **Resumable**: an ``.incomplete`` file left by an interrupted download is continued
  with an HTTP ``Range`` request; its validator (ETag / Last-Modified, kept beside it)
  goes in ``If-Range``, so a file that changed on the server is fetched again from the
  start instead of being spliced (the HTTP/1.1 rule, RFC 9110 §13.1.5).
- **Locked**: one process at a time downloads a given destination (`FileLock` in
  ``<dest_dir>/.locks``); the others wait, then find the file in place.
- **Verified**: sha256 and/or md5 when known; a mismatch deletes the partial file and
  raises `ChecksumError` giving expected and actual digests.
- **Bounded**: every socket wait has a timeout (``FW_HUB_TIMEOUT``, default 30 s); a cut
  connection is retried from where it stopped a few times, then reported.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import socket
import sys
import urllib.error
import urllib.parse
import urllib.request

from fw.hub._lock import FileLock
from fw.hub.errors import ChecksumError, DownloadError, OfflineError

__all__ = ["download_url", "fetch", "is_offline", "apply_mirrors", "file_digest",
           "url_file_name", "check_digests", "DEFAULT_TIMEOUT"]

DEFAULT_TIMEOUT = float(os.environ.get("FW_HUB_TIMEOUT", "30"))
_CHUNK = 1 << 20
_RETRIES = 3  # resumed attempts after a connection is cut mid-body
_TRUE = {"1", "true", "yes", "on"}


def is_offline() -> bool:
    """True when ``FW_HUB_OFFLINE`` or ``HF_HUB_OFFLINE`` is set to 1/true/yes/on.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os
            >>> from fw.hub.download import is_offline
            >>> saved_env = dict(os.environ)
            >>> os.environ["HF_HUB_OFFLINE"] = "1"
            >>> is_offline()
            True
            >>> os.environ.clear(); os.environ.update(saved_env)
    """
    return any(os.environ.get(v, "").strip().lower() in _TRUE
               for v in ("FW_HUB_OFFLINE", "HF_HUB_OFFLINE"))


def apply_mirrors(url: str) -> str:
    """Rewrite `url` by the first prefix of ``FW_HUB_MIRRORS`` it starts with.

    ``FW_HUB_MIRRORS`` is ``"prefix=replacement[,prefix=replacement...]"``; each pair is
    split at its first ``=`` (URL prefixes do not contain one, query strings do).

    Args:
        url (str): the URL a model file names.

    Returns:
        str: the URL to fetch.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os
            >>> saved_env = dict(os.environ)
            >>> from fw.hub.download import apply_mirrors
            >>> os.environ["FW_HUB_MIRRORS"] = "https://a.example/m/=http://127.0.0.1:8000/"
            >>> apply_mirrors("https://a.example/m/x.pdparams")
            'http://127.0.0.1:8000/x.pdparams'
            >>> os.environ.clear(); os.environ.update(saved_env)
    """
    spec = os.environ.get("FW_HUB_MIRRORS", "")
    for pair in spec.split(","):
        pair = pair.strip()
        if not pair:
            continue
        prefix, sep, repl = pair.partition("=")
        if not sep or not prefix:
            raise ValueError(f"fw.hub: FW_HUB_MIRRORS entry {pair!r} is not prefix=replacement")
        if url.startswith(prefix):
            return repl + url[len(prefix):]
    return url


def url_file_name(url: str) -> str:
    """The last path component of `url` (unquoted), the name a download is stored under.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> from fw.hub.download import url_file_name
            >>> url_file_name("https://x.org/models/resnet%2018.pdparams?download=1")
            'resnet 18.pdparams'
    """
    name = os.path.basename(urllib.parse.unquote(urllib.parse.urlsplit(url).path))
    if not name or name in (".", ".."):
        raise ValueError(f"fw.hub: cannot derive a file name from the URL {url!r}; pass "
                         f"file_name=")
    return name


def file_digest(path, algorithm: str = "sha256") -> str:
    """Hex digest of a file, read in 1 MiB chunks.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> from fw.hub.download import file_digest
            >>> p = os.path.join(tempfile.mkdtemp(), "f")
            >>> with open(p, "wb") as f:
            ...     _ = f.write(b"abc")
            >>> file_digest(p, "md5")
            '900150983cd24fb0d6963f7d28e17f72'
    """
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _norm(expected, algorithm, size):
    if expected is None:
        return None
    if not isinstance(expected, str) or len(expected) > size * 2 or not expected:
        raise ValueError(f"fw.hub: {algorithm} must be a hex string of up to {size * 2} "
                         f"digits, got {expected!r}")
    e = expected.strip().lower()
    try:
        int(e, 16)
    except ValueError:
        raise ValueError(f"fw.hub: {algorithm} must be a hex string, got {expected!r}") from None
    return e


def check_digests(path, *, sha256=None, md5=None, what=None) -> None:
    """Raise `ChecksumError` if `path`'s sha256/md5 differs from the given one. A sha256
    shorter than 64 digits is a prefix (torch's ``name-<sha256 prefix>.ext`` convention).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> from fw.hub.download import check_digests
            >>> p = os.path.join(tempfile.mkdtemp(), "f")
            >>> with open(p, "wb") as f:
            ...     _ = f.write(b"abc")
            >>> check_digests(p, sha256="ba7816bf")  # a prefix, torch.hub's convention
            >>> check_digests(p, md5="0" * 32)  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            fw.hub.errors.ChecksumError: ...: md5 mismatch: expected 000..., got 900150983cd2...
    """
    sha256 = _norm(sha256, "sha256", 32)
    md5 = _norm(md5, "md5", 16)
    for algo, want in (("sha256", sha256), ("md5", md5)):
        if want is None:
            continue
        got = file_digest(path, algo)
        if not got.startswith(want) or (algo == "md5" and len(want) != 32):
            raise ChecksumError(f"fw.hub: {what or path}: {algo} mismatch: expected {want}, "
                                f"got {got}")


class _Hashers:
    def __init__(self, sha256, md5):
        self.h = {}
        if sha256 is not None:
            self.h["sha256"] = hashlib.sha256()
        if md5 is not None:
            self.h["md5"] = hashlib.md5()

    def update(self, b):
        for h in self.h.values():
            h.update(b)


def _progress_bar(total, initial, name, progress):
    enabled = bool(progress) and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm is a dependency; a stripped install just shows nothing
        return None
    return tqdm(total=total, initial=initial, unit="B", unit_scale=True, unit_divisor=1024,
                desc=name, leave=False, file=sys.stderr)


def _validator(resp) -> str | None:
    etag = resp.headers.get("ETag")
    if etag and not etag.startswith("W/"):  # If-Range needs a strong validator
        return etag
    return resp.headers.get("Last-Modified")


def _content_range_start(value: str | None) -> tuple[int, int | None] | None:
    # "bytes 100-199/200" -> (100, 200); "bytes 100-199/*" -> (100, None)
    if not value or not value.startswith("bytes "):
        return None
    try:
        span, _, total = value[6:].partition("/")
        start = int(span.split("-")[0])
        return start, (None if total.strip() == "*" else int(total))
    except ValueError:
        return None


def _read_meta(meta_path):
    try:
        with open(meta_path, encoding="utf-8") as f:
            m = json.load(f)
        return m if isinstance(m, dict) else {}
    except (OSError, ValueError):
        return {}


def _remove(*paths):
    for p in paths:
        try:
            os.remove(p)
        except FileNotFoundError:
            pass


def _open_url(url, start, validator, timeout, headers):
    req = urllib.request.Request(url, headers={"User-Agent": "fw-hub", **(headers or {})})
    if start > 0:
        req.add_header("Range", f"bytes={start}-")
        if validator:
            req.add_header("If-Range", validator)
    try:
        return urllib.request.urlopen(req, timeout=timeout)  # noqa: S310 - http(s) checked
    except urllib.error.HTTPError as e:
        if e.code == 416 and start > 0:
            e.close()
            return None  # our partial is no prefix of the file: start over
        e.close()
        raise DownloadError(f"fw.hub: downloading {url} failed: HTTP {e.code} "
                            f"{e.reason}") from None
    except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
        reason = getattr(e, "reason", e)
        if isinstance(reason, (socket.timeout, TimeoutError)):
            raise DownloadError(f"fw.hub: downloading {url} timed out after {timeout:g} s "
                                f"(FW_HUB_TIMEOUT sets the limit)") from None
        raise DownloadError(f"fw.hub: cannot reach {url}: {reason}") from None


def _transfer(url, tmp, meta_path, hashers, timeout, headers, progress, name, seen_headers,
              own_partial):
    """One attempt: continue `tmp` from its current size. Returns True when complete,
    False when the connection was cut (the partial stays for the next attempt).
    A partial left by an earlier call is continued only with a validator for If-Range
    (without one, a file changed on the server would be spliced): `own_partial` says
    it was written by this call a moment ago."""
    start = os.path.getsize(tmp) if os.path.exists(tmp) else 0
    meta = _read_meta(meta_path) if start else {}
    validator = meta.get("validator")
    if start and (meta.get("url") != url or not (validator or own_partial)):
        start, validator = 0, None  # another URL's partial, or one that cannot be checked
    resp = _open_url(url, start, validator, timeout, headers)
    if resp is None:  # 416
        _remove(tmp, meta_path)
        start = 0
        resp = _open_url(url, 0, None, timeout, headers)
    with resp:
        if seen_headers is not None:
            seen_headers.update({k.lower(): v for k, v in resp.headers.items()})
        status = getattr(resp, "status", 200)
        total = None
        if start and status == 206:
            cr = _content_range_start(resp.headers.get("Content-Range"))
            if cr is None or cr[0] != start:
                raise DownloadError(f"fw.hub: {url}: the server answered a range request "
                                    f"with Content-Range {resp.headers.get('Content-Range')!r}")
            total = cr[1]
            mode = "ab"
        else:
            start, mode = 0, "wb"  # 200: the whole file (no range support, or it changed)
            length = resp.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
        if start:
            with open(tmp, "rb") as f:  # the hashes cover the bytes already here
                for block in iter(lambda: f.read(_CHUNK), b""):
                    hashers.update(block)
        with open(meta_path, "w", encoding="utf-8") as f:
            json.dump({"url": url, "validator": _validator(resp), "total": total}, f)
        bar = _progress_bar(total, start, name, progress)
        got = start
        try:
            with open(tmp, mode) as out:
                while True:
                    try:
                        block = resp.read(_CHUNK)
                    except TimeoutError:
                        raise DownloadError(f"fw.hub: downloading {url} stalled: no data for "
                                            f"{timeout:g} s (FW_HUB_TIMEOUT sets the limit; "
                                            f"rerun to resume from {got} bytes)") from None
                    except (ConnectionError, OSError, ValueError, http.client.HTTPException):
                        return False  # cut mid-body (IncompleteRead, reset): resume
                    if not block:
                        break
                    out.write(block)
                    hashers.update(block)
                    got += len(block)
                    if bar is not None:
                        bar.update(len(block))
        finally:
            if bar is not None:
                bar.close()
        if total is not None and got < total:
            return False
        if total is not None and got > total:
            _remove(tmp, meta_path)
            raise DownloadError(f"fw.hub: {url}: the server sent {got} bytes, more than the "
                                f"{total} it announced")
        return True


def _cached_ok(dest, sha256, md5) -> bool:
    """A file at `dest` with the expected hashes. One whose hash differs (corrupted, or
    an older version) counts as a miss and is replaced by a verified download; offline,
    that is an error (no network to repair it)."""
    if not os.path.isfile(dest):
        return False
    try:
        check_digests(dest, sha256=sha256, md5=md5, what=f"the cached file {dest}")
    except ChecksumError as e:
        if is_offline():
            raise ChecksumError(f"{e}; offline mode, so it cannot be fetched again: replace "
                                f"the file") from None
        return False
    return True


def fetch(url: str, dest: str, *, sha256=None, md5=None, progress=True, timeout=None,
          headers=None, lock_timeout=None, force=False, response_headers=None,
          lock=True) -> str:
    """Download `url` to the file `dest` (exact path) unless a good copy is already there.

    See the module docstring for the guarantees. `url` is rewritten by
    ``FW_HUB_MIRRORS`` first. ``force=True`` downloads even when `dest` exists (the new
    file replaces it only once complete and verified). `response_headers`, a dict, receives
    the last response's headers (lower-cased names) when a download happened.
    ``lock=False`` skips the inter-process lock (for a `dest` name no other process
    uses). Returns `dest`.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> from fw.hub.download import fetch
            >>> from fw.hub.testing import serve_directory
            >>> src = tempfile.mkdtemp()
            >>> with open(os.path.join(src, "a.bin"), "wb") as f:
            ...     _ = f.write(b"abc")
            >>> headers = {}
            >>> with serve_directory(src) as base:
            ...     p = fetch(base + "/a.bin", os.path.join(tempfile.mkdtemp(), "copy.bin"),
            ...               md5="900150983cd24fb0d6963f7d28e17f72", progress=False,
            ...               response_headers=headers)
            >>> os.path.basename(p), headers["content-length"]
            ('copy.bin', '3')
    """
    dest = os.path.abspath(os.fspath(dest))
    sha256 = _norm(sha256, "sha256", 32)
    md5 = _norm(md5, "md5", 16)
    timeout = DEFAULT_TIMEOUT if timeout is None else float(timeout)
    if not force and _cached_ok(dest, sha256, md5):
        return dest
    real_url = apply_mirrors(url)
    if is_offline():
        if force and os.path.isfile(dest):
            return dest  # asked to refresh, but offline: the cached copy is what there is
        via = f" (mirrored to {real_url})" if real_url != url else ""
        raise OfflineError(f"fw.hub: offline mode (FW_HUB_OFFLINE/HF_HUB_OFFLINE) and {url}"
                           f"{via} is not cached: download it on a connected machine and place "
                           f"it at {dest}")
    scheme = urllib.parse.urlsplit(real_url).scheme
    if scheme not in ("http", "https"):
        raise ValueError(f"fw.hub: can only download http(s) URLs, got {real_url!r}")
    d, name = os.path.split(dest)
    os.makedirs(d, exist_ok=True)
    guard = FileLock(os.path.join(d, ".locks", name + ".lock"), timeout=lock_timeout) \
        if lock else contextlib.nullcontext()
    with guard:
        if not force and _cached_ok(dest, sha256, md5):  # done by another process meanwhile
            return dest
        tmp, meta_path = dest + ".incomplete", dest + ".incomplete.json"
        for attempt in range(_RETRIES + 1):
            hashers = _Hashers(sha256, md5)
            if _transfer(real_url, tmp, meta_path, hashers, timeout, headers, progress, name,
                         response_headers, own_partial=attempt > 0):
                break
            if attempt == _RETRIES:
                size = os.path.getsize(tmp) if os.path.exists(tmp) else 0
                raise DownloadError(f"fw.hub: downloading {real_url} was cut off {_RETRIES + 1}"
                                    f" times (have {size} bytes in {tmp}); rerun to resume")
        for algo, want in (("sha256", sha256), ("md5", md5)):
            if want is None:
                continue
            got = hashers.h[algo].hexdigest()
            if not got.startswith(want) or (algo == "md5" and len(want) != 32):
                _remove(tmp, meta_path)
                raise ChecksumError(f"fw.hub: {real_url}: {algo} mismatch: expected {want}, got "
                                    f"{got}; the download was deleted and the cache left as it "
                                    f"was")
        os.replace(tmp, dest)
        _remove(meta_path)
    return dest


def download_url(url: str, dest_dir, *, sha256: str | None = None, md5: str | None = None,
                 progress: bool = True, file_name: str | None = None,
                 timeout: float | None = None) -> str:
    """Download `url` into `dest_dir` (atomic, resumable, locked, hash-checked).

    A file already in `dest_dir` under the URL's name is returned without touching the
    network (after checking its hash when one is given).

    Args:
        url (str): an http(s) URL (rewritten by ``FW_HUB_MIRRORS`` first).
        dest_dir (str): directory to store the file in (created if missing).
        sha256 (str, optional): expected sha256 (a prefix of at least one digit is
            accepted, as in torch's ``name-<sha256 prefix>.ext`` file names).
        md5 (str, optional): expected md5 (32 hex digits).
        progress (bool, optional): show a tqdm bar when stderr is a terminal. Default True.
        file_name (str, optional): store under this name instead of the URL's last part.
        timeout (float, optional): seconds any network wait may take (``FW_HUB_TIMEOUT``,
            default 30).

    Returns:
        str: the path of the file.

    Raises:
        ChecksumError: the hash differs (the partial file is deleted, the cache intact).
        OfflineError: offline mode and the file is not in `dest_dir`.
        DownloadError: the server could not be reached, answered an error, or timed out.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> from fw.hub.testing import serve_directory
            >>> from fw.utils.download import download_url
            >>> src = tempfile.mkdtemp()
            >>> with open(os.path.join(src, "w.bin"), "wb") as f:
            ...     _ = f.write(b"weights")
            >>> with serve_directory(src) as base:
            ...     p = download_url(base + "/w.bin", tempfile.mkdtemp(), progress=False,
            ...                      sha256="9a129038")
            >>> with open(p, "rb") as f:
            ...     f.read()
            b'weights'
    """
    name = file_name if file_name is not None else url_file_name(url)
    if os.path.basename(name) != name or name in ("", ".", ".."):
        raise ValueError(f"fw.hub.download_url: file_name must be a plain file name, got "
                         f"{name!r}")
    return fetch(url, os.path.join(os.fspath(dest_dir), name), sha256=sha256, md5=md5,
                 progress=progress, timeout=timeout)
