"""Test helpers: a loopback HTTP file server with Range support.

`serve_directory(path)` serves a directory on 127.0.0.1 (an OS-chosen port) from a
background thread for the length of a ``with`` block: GET and HEAD, single byte ranges
(``Range: bytes=a-b`` / ``a-`` / ``-n``, answered 206 with Content-Range, 416 when
unsatisfiable), strong ETags with ``If-Range``, and a request log. Tests of downloads,
datasets and pretrained weights point ``FW_HUB_MIRRORS`` at it.

`write_torch_checkpoint(path, obj)` writes ``torch.save``'s zip layout from NumPy arrays
(no PyTorch needed), for tests of the PyTorch readers and their hostile variants.
"""

from __future__ import annotations

import collections
import contextlib
import email.utils
import hashlib
import http.server
import io
import os
import pickle
import posixpath
import threading
import urllib.parse
import zipfile

import numpy as np

__all__ = ["serve_directory", "ServedURL", "write_torch_checkpoint"]


class ServedURL(str):
    """The base URL (``http://127.0.0.1:<port>``, no trailing slash), a ``str``, with:

    - ``requests``: a list of ``(method, path, range header or None)``, one per request;
    - ``cut_after``: set to an int N to make the next full or ranged body stop after N
      bytes and drop the connection (a cut download), once;
    - ``fail_status``: set to an HTTP status (e.g. 503) to answer every request with it.
    """

    requests: list
    cut_after: int | None
    fail_status: int | None


def _etag(st) -> str:
    return '"' + hashlib.sha1(f"{st.st_size}-{st.st_mtime_ns}".encode()).hexdigest()[:16] + '"'


def _make_handler(root: str, served: ServedURL):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "fw-hub-test"

        def log_message(self, fmt, *args):  # keep test output clean
            pass

        def _file(self):
            path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
            parts = [p for p in posixpath.normpath(path).split("/") if p not in ("", ".")]
            if any(p == ".." for p in parts):
                return None
            full = os.path.join(root, *parts)
            # never serve outside the root, symlinks included
            real = os.path.realpath(full)
            if real != root and not real.startswith(root + os.sep):
                return None
            return real if os.path.isfile(real) else None

        def _send_error(self, code):
            body = f"{code}\n".encode()
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            self.close_connection = True

        def _serve(self):
            served.requests.append((self.command, self.path, self.headers.get("Range")))
            if served.fail_status:
                return self._send_error(served.fail_status)
            full = self._file()
            if full is None:
                return self._send_error(404)
            st = os.stat(full)
            size, etag = st.st_size, _etag(st)
            start, end, status = 0, size - 1, 200
            rng = self.headers.get("Range")
            if_range = self.headers.get("If-Range")
            if rng and (if_range is None or if_range == etag):
                spec = rng.strip()
                if not spec.startswith("bytes=") or "," in spec:
                    return self._send_error(416)
                a, _, b = spec[6:].partition("-")
                try:
                    if a == "":
                        n = int(b)
                        start, end = max(size - n, 0), size - 1
                    else:
                        start = int(a)
                        end = min(int(b), size - 1) if b else size - 1
                except ValueError:
                    return self._send_error(416)
                if start >= size or start > end:
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{size}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                status = 206
            length = end - start + 1 if size else 0
            self.send_response(status)
            self.send_header("Content-Length", str(length))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True))
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            self.end_headers()
            if self.command == "HEAD":
                return
            cut, served.cut_after = served.cut_after, None
            with open(full, "rb") as f:
                f.seek(start)
                left = length if cut is None else min(length, cut)
                while left > 0:
                    block = f.read(min(left, 1 << 16))
                    if not block:
                        break
                    self.wfile.write(block)
                    left -= len(block)
            if cut is not None and cut < length:
                self.close_connection = True
                self.wfile.flush()
                self.connection.shutdown(2)  # the client sees a short body

        do_GET = _serve
        do_HEAD = _serve

    return Handler


@contextlib.contextmanager
def serve_directory(path, *, timeout: float = 10.0):
    """Serve the files under `path` over HTTP on 127.0.0.1 for the ``with`` block.

    Args:
        path (str): directory to serve (files outside it, through ``..`` or symlinks,
            are answered 404).
        timeout (float, optional): seconds a connection may stay idle before the server
            drops it, so a stuck client never keeps the test's thread alive. Default 10.

    Returns:
        A context manager yielding a `ServedURL`: the base URL without a trailing slash
        (``base + "/name"`` is the file ``path/name``), with a request log.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile, urllib.request
            >>> from fw.hub.testing import serve_directory
            >>> d = tempfile.mkdtemp()
            >>> with open(os.path.join(d, "a.txt"), "wb") as f:
            ...     _ = f.write(b"hello")
            >>> with serve_directory(d) as base:
            ...     req = urllib.request.Request(base + "/a.txt", headers={"Range": "bytes=1-"})
            ...     with urllib.request.urlopen(req, timeout=5) as r:
            ...         print(r.status, r.read())
            206 b'ello'
    """
    root = os.path.realpath(os.fspath(path))
    if not os.path.isdir(root):
        raise NotADirectoryError(f"fw.hub.testing.serve_directory: {path} is not a directory")

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True

    # bind first (port 0: the OS picks a free one), then install the handler that knows it
    httpd = Server(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    httpd.timeout = timeout
    host, port = httpd.server_address[:2]
    served = ServedURL(f"http://{host}:{port}")
    served.requests, served.cut_after, served.fail_status = [], None, None
    httpd.RequestHandlerClass = _make_handler(root, served)
    httpd.RequestHandlerClass.timeout = timeout  # per-connection socket timeout
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              name="fw-hub-serve_directory", daemon=True)
    thread.start()
    try:
        yield served
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout)


class _Global:
    """A reference to module.name, written as a GLOBAL opcode without importing it."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *a):  # pickle insists that a reduce function be callable
        raise TypeError("a placeholder")


class _Storage:
    def __init__(self, key, array):
        self.key, self.array = key, array


class _TorchPickler(pickle._Pickler):
    """Python's pickler with torch's tensor reduction (``_rebuild_tensor_v2`` over a
    storage persistent id), as ``torch.save`` writes it."""

    def __init__(self, file, storages):
        super().__init__(file, protocol=2)
        self.storages = storages

    def save_global_ref(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[_Global] = save_global_ref

    def persistent_id(self, obj):
        if isinstance(obj, _Storage):
            from fw.hub.torch_pickle import TORCH_STORAGE_DTYPES

            names = {np.dtype(v): k for k, v in TORCH_STORAGE_DTYPES.items()}
            return ("storage", _Global("torch", names[obj.array.dtype]), obj.key, "cpu",
                    obj.array.size)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, np.ndarray):
            arr = np.ascontiguousarray(obj)
            key = str(len(self.storages))
            self.storages.append((key, arr))
            stride = tuple(s // arr.itemsize for s in arr.strides) if arr.size else \
                tuple(int(np.prod(arr.shape[i + 1:])) for i in range(arr.ndim))
            return (_Global("torch._utils", "_rebuild_tensor_v2"),
                    (_Storage(key, arr.reshape(-1)), 0, tuple(arr.shape), stride, False,
                     collections.OrderedDict()))
        return NotImplemented


def write_torch_checkpoint(path, obj, *, archive_name: str | None = None) -> None:
    """Write `obj` (dicts/lists of NumPy arrays and plain values) in ``torch.save``'s zip
    format: ``<name>/data.pkl`` (protocol 2, tensors as ``torch._utils._rebuild_tensor_v2``
    over ``("storage", torch.<Type>Storage, key, "cpu", numel)`` persistent ids),
    ``<name>/data/<key>`` records, ``byteorder`` and ``version``.

    Args:
        path (str): the file to write.
        obj: the object; NumPy arrays become tensors.
        archive_name (str, optional): the record prefix (default: the file's stem).

    Returns:
        None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile, zipfile, numpy as np
            >>> from fw.hub.testing import write_torch_checkpoint
            >>> p = os.path.join(tempfile.mkdtemp(), "w.pt")
            >>> write_torch_checkpoint(p, {"w": np.zeros(3, np.float32)})
            >>> sorted(zipfile.ZipFile(p).namelist())
            ['w/byteorder', 'w/data.pkl', 'w/data/0', 'w/version']
    """
    path = os.fspath(path)
    name = archive_name or os.path.splitext(os.path.basename(path))[0]
    storages: list = []
    buf = io.BytesIO()
    _TorchPickler(buf, storages).dump(obj)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{name}/data.pkl", buf.getvalue())
        z.writestr(f"{name}/byteorder", "little")
        for key, arr in storages:
            z.writestr(f"{name}/data/{key}", arr.astype(arr.dtype.newbyteorder("<")
                                                       if arr.dtype.itemsize > 1
                                                       and arr.dtype.kind in "fiuc"
                                                       else arr.dtype).tobytes())
        z.writestr(f"{name}/version", "3\n")
