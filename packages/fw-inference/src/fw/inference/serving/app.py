"""`create_app`: the ASGI application (starlette) that serves fw models over HTTP.

Routes:

- ``POST /v1/models/{name}:predict``: run model `name` on the body (JSON, .npy or
  safetensors: see `codec`); answers ``{"outputs": {...}}`` or a binary body;
- ``GET /v1/models``: ``{"models": [{"name", "inputs", "outputs", "batching"}]}``
  (each input/output as ``{"name", "shape", "dtype"}``, -1 for a dynamic dim);
  ``GET /v1/models/{name}``: one of them;
- ``GET /health``: the process is up; ``GET /ready``: the models are loaded and
  their threads run (503 before startup and once shutdown has begun);
- ``GET /metrics``: Prometheus text format (`metrics`).

The event loop never runs a model and never parses a large body: bodies over
256 KiB are decoded and answers encoded in starlette's thread pool, and the
model runs on its `ModelRunner` threads, whose results come back through
``loop.call_soon_threadsafe``. Every wait is bounded: a request waits at most
``request_timeout_s`` for its model (then 504), the queue at most ``max_queue``
requests (then 503), a body at most ``max_body_bytes`` (then 413). Errors are
``{"error": message}`` with the status; an unexpected exception is a 500 with its
message and the server stays up.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import threading
import time

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from fw.inference.serving.batcher import ModelRunner
from fw.inference.serving.codec import answer_type, decode, encode
from fw.inference.serving.errors import RequestError
from fw.inference.serving.metrics import CONTENT_TYPE, Metrics
from fw.inference.serving.model import describe, load_predictor, model_name
from fw.inference.serving.options import ServingOptions

__all__ = ["create_app", "Serving", "app_from_environment", "ENV_SPEC"]

_log = logging.getLogger("fw.inference.serving")
_INLINE_BYTES = 256 << 10  # bodies up to this size are decoded on the event loop
_DRAIN_BYTES = 4 << 20  # how far past the body limit a body is still read (and dropped)
ENV_SPEC = "FW_SERVING_SPEC"  # how `--workers` hands the models and options to each worker


@dataclasses.dataclass
class ServedModel:
    spec: object  # ModelSpec
    runner: ModelRunner


def model_sources(models) -> list:
    """`models` as ``[(name, source)]``: a path, a list of paths or ``(name, source)``
    pairs, or a dict ``{name: source}`` (a source: a model file, a Config or a
    Predictor). Names default to the file's stem and must be unique."""
    if isinstance(models, dict):
        pairs = [(model_name(n, s), s) for n, s in models.items()]
    elif isinstance(models, (list, tuple)):
        pairs = []
        for m in models:
            if isinstance(m, tuple) and len(m) == 2:
                pairs.append((model_name(m[0], m[1]), m[1]))
            else:
                pairs.append((model_name(None, m), m))
    else:
        pairs = [(model_name(None, models), models)]
    if not pairs:
        raise ValueError("serving needs at least one model")
    names = [n for n, _ in pairs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"two models are named {dup}: name them, e.g. "
                         f"{{'a': 'dir1/{dup[0]}.fwmodel', 'b': 'dir2/{dup[0]}.fwmodel'}}")
    return pairs


class Serving:
    """The state of one server process: its models (name -> spec and runner), the
    options and the metrics. `start` starts the model threads; `close` drains and
    stops them."""

    def __init__(self, models, options: ServingOptions | None = None):
        self.options = options or ServingOptions()
        pairs = model_sources(models)
        self.metrics = Metrics([n for n, _ in pairs])
        self.models: dict = {}
        for name, source in pairs:
            predictor = load_predictor(source, self.options.cpu_threads)
            spec = describe(name, predictor)
            runner = ModelRunner(name, predictor, spec, self.options, self.metrics)
            self.metrics.watch_queue(name, runner.depth)
            self.models[name] = ServedModel(spec, runner)
        self.started = threading.Event()
        self.stopping = False

    def start(self) -> None:
        for m in self.models.values():
            m.runner.start()
        self.started.set()

    def close(self) -> None:
        self.stopping = True
        for m in self.models.values():
            m.runner.close(self.options.graceful_timeout_s)

    @property
    def ready(self) -> bool:
        return self.started.is_set() and not self.stopping


def _error(e: RequestError) -> JSONResponse:
    return JSONResponse({"error": e.message}, status_code=e.status)


async def _read_body(request: Request, limit: int) -> bytes:
    """The body, at most `limit` bytes; else a 413. A body a little over the limit
    (up to `_DRAIN_BYTES` more) is read to its end and dropped first, so that a
    client that sends it all before reading gets the 413, not a reset connection."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            n = int(declared)
        except ValueError:
            raise RequestError(400, f"Content-Length {declared!r} is not a number") from None
        if n > limit + _DRAIN_BYTES:
            raise _too_large(limit, n)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            chunks = None
            if size > limit + _DRAIN_BYTES:
                break
            continue
        chunks.append(chunk)
    if chunks is None:
        raise _too_large(limit, size if declared is None else int(declared))
    return b"".join(chunks)


def _too_large(limit: int, size: int) -> RequestError:
    return RequestError(413, f"the body is {size} bytes or more, over the limit of {limit} "
                             f"bytes (max_body_bytes, --max-body-mb)")


def _settle(future, outs, error) -> None:
    if future.done():  # the request timed out or its client left
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(outs)


def create_app(models, options: ServingOptions | None = None) -> Starlette:
    """The ASGI app serving `models` (see `model_sources`) with `options`.

    Loads every model now; the model threads start with the app's lifespan
    (uvicorn runs it) and stop, after the queued requests, when it ends.
    ``app.state.serving`` is the `Serving`.

    >>> import fw
    >>> from fw.inference.serving import create_app
    >>> app = create_app("lenet_digits.fwmodel")   # doctest: +SKIP
    """
    serving = Serving(models, options)
    opts = serving.options

    @contextlib.asynccontextmanager
    async def lifespan(app):
        serving.start()
        try:
            yield
        finally:
            await run_in_threadpool(serving.close)  # joins threads: off the loop

    async def predict(request: Request) -> Response:
        t0 = time.perf_counter()
        name = request.path_params["name"]
        serving.metrics.request_started()
        status = 500
        try:
            response = await _predict(request, name)
            status = response.status_code
            return response
        except RequestError as e:
            status = e.status
            return _error(e)
        except ClientDisconnect:
            status = 499  # nginx's code for "the client closed the request"
            return Response(status_code=400)
        except Exception as e:  # a fault of the server: say it, stay up
            _log.exception("predict on model %r failed", name)
            return _error(RequestError(500, f"internal error: {type(e).__name__}: {e}"))
        finally:
            serving.metrics.request_done(name, status, time.perf_counter() - t0)

    async def _predict(request: Request, name: str) -> Response:
        model = serving.models.get(name)
        if model is None:
            raise RequestError(404, f"no model named {name!r}; this server has "
                                    f"{sorted(serving.models)}")
        try:  # a client that sends its body slowly does not hold the request forever
            body = await asyncio.wait_for(_read_body(request, opts.max_body_bytes),
                                          opts.request_timeout_s)
        except asyncio.TimeoutError:
            raise RequestError(408, f"the request body did not arrive within "
                                    f"{opts.request_timeout_s:g} s (request_timeout_s)") from None
        query = dict(request.query_params)
        ctype = request.headers.get("content-type", "")
        if len(body) > _INLINE_BYTES:
            decoded = await run_in_threadpool(decode, body, ctype, model.spec, query)
        else:
            decoded = decode(body, ctype, model.spec, query)
        del body
        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def on_done(outs, error):  # on a model thread
            try:
                loop.call_soon_threadsafe(_settle, future, outs, error)
            except RuntimeError:  # the loop has closed: nobody waits any more
                pass

        job = model.runner.job(decoded.arrays, on_done)
        model.runner.submit(job)
        try:
            outs = await asyncio.wait_for(future, opts.request_timeout_s)
        except asyncio.TimeoutError:
            job.cancelled = True
            raise RequestError(504, f"model '{name}' gave no answer within "
                                    f"{opts.request_timeout_s:g} s (request_timeout_s); "
                                    f"{model.runner.depth()} requests are waiting") from None
        except asyncio.CancelledError:  # uvicorn gave up on it (a forced shutdown)
            job.cancelled = True
            raise
        names = model.spec.output_names
        outputs = {n: outs[names.index(n)] for n in decoded.fetch}
        kind = answer_type(request.headers.get("accept", ""), decoded.protocol)
        if sum(a.nbytes for a in outputs.values()) > _INLINE_BYTES:
            payload = await run_in_threadpool(encode, outputs, kind, decoded.protocol, name)
        else:
            payload = encode(outputs, kind, decoded.protocol, name)
        return Response(payload, media_type=kind)

    async def list_models(request: Request) -> Response:
        return JSONResponse({"models": [m.spec.describe() for m in serving.models.values()]})

    async def one_model(request: Request) -> Response:
        name = request.path_params["name"]
        if name.endswith(":predict"):  # the predict route answers POST only
            return _error(RequestError(405, f"{name} takes POST (a JSON or binary body)"))
        model = serving.models.get(name)
        if model is None:
            return _error(RequestError(404, f"no model named {name!r}; this server has "
                                            f"{sorted(serving.models)}"))
        return JSONResponse(model.spec.describe())

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def ready(request: Request) -> Response:
        if serving.ready:
            return JSONResponse({"status": "ready", "models": sorted(serving.models)})
        state = "stopping" if serving.stopping else "starting"
        return JSONResponse({"status": state}, status_code=503)

    async def metrics(request: Request) -> Response:
        return Response(serving.metrics.render(), media_type=CONTENT_TYPE)

    async def http_error(request: Request, exc: HTTPException) -> Response:
        return JSONResponse({"error": f"{exc.detail}: {request.method} {request.url.path}"},
                            status_code=exc.status_code, headers=exc.headers)

    app = Starlette(routes=[
        Route("/v1/models/{name}:predict", predict, methods=["POST"]),
        Route("/v1/models", list_models, methods=["GET"]),
        Route("/v1/models/{name}", one_model, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/ready", ready, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ], lifespan=lifespan, exception_handlers={HTTPException: http_error})
    app.state.serving = serving
    return app


def app_from_environment() -> Starlette:
    """The app a ``--workers`` process builds: models and options from the JSON in
    the environment variable ``FW_SERVING_SPEC`` (set by the parent process)."""
    spec = os.environ.get(ENV_SPEC)
    if not spec:
        raise RuntimeError(f"{ENV_SPEC} is not set: this factory is for the worker "
                           f"processes of `python -m fw.inference.serve --workers N`")
    doc = json.loads(spec)
    return create_app([tuple(p) for p in doc["models"]],
                      ServingOptions(**doc["options"]))
