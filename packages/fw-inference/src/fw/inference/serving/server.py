"""`Server`: uvicorn running the serving app — in the foreground (`run`, what
``python -m fw.inference.serve`` does), in a background thread (`start` /
`stop`, for tests and notebooks), or as N worker processes (`run_workers`).

The listening socket is bound here, before uvicorn starts, so that ``port=0``
gets a free port that is known (``server.port``) before the first request, and
the worker processes of `run_workers` share one socket (each loads the models).

Shutdown is graceful: SIGINT/SIGTERM (or `stop`) make uvicorn stop accepting
connections, let the requests in flight finish (at most
``options.graceful_timeout_s``), then the model threads drain their queues and
stop.
"""

from __future__ import annotations

import inspect
import json
import os
import socket
import threading
import time

import uvicorn

from fw.inference.serving.app import ENV_SPEC, create_app, model_sources
from fw.inference.serving.options import ServingOptions

__all__ = ["Server", "run_workers", "bind"]


def bind(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A listening TCP socket on (`host`, `port`); port 0 picks a free one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError as e:
        sock.close()
        raise OSError(e.errno, f"cannot listen on {host}:{port}: {e.strerror}") from None
    sock.set_inheritable(True)
    return sock


def _config(app, options: ServingOptions, log_level: str, access_log: bool, **kw):
    return uvicorn.Config(app, lifespan="on", log_level=log_level, access_log=access_log,
                          timeout_graceful_shutdown=options.graceful_timeout_s, **kw)


class Server:
    """Serve `models` over HTTP.

    Args:
        models: a model file, a list of them (or of ``(name, source)`` pairs), or a
            dict ``{name: source}``; a source is a model file, a
            ``fw.inference.Config`` or a ``Predictor``. Names default to the file's
            stem.
        options: `ServingOptions` (batching, limits, timeouts).
        host, port: where to listen (port 0: any free port; see `port`).
        log_level: uvicorn's log level.
        access_log: log every request (off by default: it costs per request).

    >>> import fw
    >>> from fw.inference.serving import Server
    >>> with Server("lenet_digits.fwmodel", port=0).start() as server:  # doctest: +SKIP
    ...     print(server.url)          # http://127.0.0.1:PORT
    """

    def __init__(self, models, options: ServingOptions | None = None, host: str = "127.0.0.1",
                 port: int = 8866, log_level: str = "warning", access_log: bool = False):
        self.options = options or ServingOptions()
        self.app = create_app(models, self.options)
        self.serving = self.app.state.serving
        self.host = host
        self._sock = bind(host, port)
        self.port = self._sock.getsockname()[1]
        self._uvicorn = uvicorn.Server(_config(self.app, self.options, log_level, access_log))
        self._thread = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def run(self) -> None:
        """Serve in this thread until SIGINT/SIGTERM (handled gracefully)."""
        try:
            self._uvicorn.run(sockets=[self._sock])
        finally:
            self._sock.close()

    def start(self, timeout: float = 60.0) -> Server:
        """Serve from a background thread; returns once the server is ready
        (raises TimeoutError after `timeout` seconds, RuntimeError if it failed)."""
        if self._thread is not None:
            raise RuntimeError("this Server has already been started")
        self._thread = threading.Thread(target=self.run, name="fw-serving-uvicorn",
                                        daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not (self.serving.started.wait(0.05) and self._uvicorn.started):
            if not self._thread.is_alive():
                raise RuntimeError("the server stopped during startup (see the log above)")
            if time.monotonic() > deadline:
                self.stop(timeout=5)
                raise TimeoutError(f"the server on {self.url} was not ready within "
                                   f"{timeout:g} s")
        return self

    def stop(self, timeout: float | None = None) -> bool:
        """Stop gracefully (as SIGTERM does): no new connections, requests in
        flight finish. Waits at most `timeout` seconds (default: the graceful
        timeout + 10 s), then forces the exit. Returns whether it stopped in time."""
        if self._thread is None:  # never started: only the socket to let go
            self._sock.close()
            return True
        if timeout is None:
            timeout = self.options.graceful_timeout_s + 10.0
        self._uvicorn.should_exit = True
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._uvicorn.force_exit = True
            self._thread.join(5.0)
            return False
        return True

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def run_workers(models, options: ServingOptions | None = None, host: str = "127.0.0.1",
                port: int = 8866, workers: int = 2, log_level: str = "warning",
                access_log: bool = False, on_listen=None) -> None:
    """Serve with `workers` processes sharing one socket; each loads the models
    (they must be model files: a worker cannot receive a Predictor). Blocks until
    SIGINT/SIGTERM, which uvicorn passes on to the workers (each shuts down
    gracefully). `on_listen(port)` is called once the socket is bound."""
    from uvicorn.supervisors import Multiprocess

    options = options or ServingOptions()
    pairs = model_sources(models)
    for name, source in pairs:
        if not isinstance(source, (str, os.PathLike)):
            raise ValueError(f"model {name!r}: worker processes load models from files; got "
                             f"a {type(source).__name__}")
    os.environ[ENV_SPEC] = json.dumps({
        "models": [[n, os.path.abspath(os.fspath(s))] for n, s in pairs],
        "options": json.loads(options.to_json())})
    config = _config("fw.inference.serving.app:app_from_environment", options, log_level,
                     access_log, factory=True, workers=workers)
    sock = bind(host, port)
    if on_listen is not None:
        on_listen(sock.getsockname()[1])
    try:
        # uvicorn's own supervisor (what `uvicorn --workers` runs); older releases
        # also take the target function
        if "target" in inspect.signature(Multiprocess.__init__).parameters:
            Multiprocess(config, target=uvicorn.Server(config).run, sockets=[sock]).run()
        else:
            Multiprocess(config, sockets=[sock]).run()
    finally:
        sock.close()
