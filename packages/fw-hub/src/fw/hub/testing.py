"""Test helpers: a loopback HTTP file server with Range support.

`serve_directory(path)` serves a directory on 127.0.0.1 (an OS-chosen port) from a
background thread for the length of a ``with`` block: GET and HEAD, single byte ranges
(``Range: bytes=a-b`` / ``a-`` / ``-n``, answered 206 with Content-Range, 416 when
unsatisfiable), strong ETags with ``If-Range``, and a request log. Tests of downloads,
datasets and pretrained weights point ``FW_HUB_MIRRORS`` at it.
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import http.server
import os
import posixpath
import threading
import urllib.parse

__all__ = ["serve_directory", "ServedURL"]


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
