"""``python -m fw.inference.serve``: serve fw model files over HTTP.

    python -m fw.inference.serve lenet_digits.fwmodel --port 8866
    python -m fw.inference.serve digits=a.fwmodel mlp=b.fwmodel --workers 2 \\
        --max-batch-size 32 --batch-timeout-ms 2

Each MODEL is a model file (served under its stem: ``lenet_digits``) or
``NAME=PATH``. Endpoints: ``POST /v1/models/NAME:predict``, ``GET /v1/models``,
``/health``, ``/ready``, ``/metrics`` (see fw.inference.serving). Listens on
127.0.0.1 unless ``--host`` says otherwise; port 0 picks a free port. The line
``fw.inference.serve: serving [...] on http://HOST:PORT`` is printed once the
socket listens. SIGINT/SIGTERM stop it gracefully: requests in flight finish.

Needs the serving extra (``pip install 'fw-inference[serving]'``); without it
this command says so and exits with status 2. This module imports nothing of it
until it runs.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

__all__ = ["main", "parse_args"]

_NAMED = re.compile(r"^([A-Za-z0-9_.-]{1,128})=(.+)$")


def _model(arg: str):
    m = _NAMED.match(arg)
    if m and not os.path.exists(arg):
        return (m.group(1), m.group(2))
    return arg


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python -m fw.inference.serve",
                                 description=__doc__.split("\n\n")[0].strip("`"),
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("models", nargs="+", metavar="MODEL", type=_model,
                    help="a model file (served under its stem) or NAME=PATH")
    ap.add_argument("--host", default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1; 0.0.0.0: every interface)")
    ap.add_argument("--port", type=int, default=8866, help="default 8866; 0: a free port")
    ap.add_argument("--workers", type=int, default=1,
                    help="worker processes sharing the port, each loading the models")
    ap.add_argument("--max-batch-size", type=int, default=32,
                    help="most rows per model call (1: no dynamic batching; default 32)")
    ap.add_argument("--batch-timeout-ms", type=float, default=2.0,
                    help="how long a batch waits for more requests (default 2 ms)")
    ap.add_argument("--max-queue", type=int, default=1024,
                    help="requests waiting per model before 503 (default 1024)")
    ap.add_argument("--max-body-mb", type=float, default=64.0,
                    help="largest request body in MiB before 413 (default 64)")
    ap.add_argument("--request-timeout", type=float, default=60.0,
                    help="seconds a request waits for its model before 504 (default 60)")
    ap.add_argument("--threads-per-model", type=int, default=1,
                    help="model threads per worker, each with its own Predictor clone")
    ap.add_argument("--cpu-threads", type=int, default=None,
                    help="math library threads per predictor (default: the Predictor's)")
    ap.add_argument("--graceful-timeout", type=float, default=30.0,
                    help="seconds in-flight requests may take at shutdown (default 30)")
    ap.add_argument("--log-level", default="warning",
                    choices=["critical", "error", "warning", "info", "debug"])
    ap.add_argument("--access-log", action="store_true", help="log every request")
    args = ap.parse_args(argv)
    if args.workers < 1:
        ap.error(f"--workers must be >= 1, got {args.workers}")
    if not 0 <= args.port <= 65535:
        ap.error(f"--port must be in 0..65535, got {args.port}")
    return args


def _options(args):
    from fw.inference.serving import ServingOptions

    return ServingOptions(max_batch_size=args.max_batch_size,
                          batch_timeout_ms=args.batch_timeout_ms, max_queue=args.max_queue,
                          max_body_bytes=int(args.max_body_mb * (1 << 20)),
                          request_timeout_s=args.request_timeout,
                          threads_per_model=args.threads_per_model,
                          cpu_threads=args.cpu_threads,
                          graceful_timeout_s=args.graceful_timeout)


def _announce(names, host, port, args):
    shown = f"[{host}]" if ":" in host else host
    batching = (f"batching up to {args.max_batch_size} rows / {args.batch_timeout_ms:g} ms"
                if args.max_batch_size > 1 else "no batching")
    print(f"fw.inference.serve: serving {names} on http://{shown}:{port} "
          f"({args.workers} worker{'s' if args.workers > 1 else ''}, {batching})", flush=True)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        from fw.inference import serving
    except ModuleNotFoundError as e:
        if e.name not in ("starlette", "uvicorn") and "fw-inference[serving]" not in str(e):
            raise
        print(f"python -m fw.inference.serve: {e}", file=sys.stderr)
        return 2
    try:
        options = _options(args)
        names = [n for n, _ in serving.app.model_sources(args.models)]
        if args.workers > 1:
            serving.run_workers(args.models, options, args.host, args.port, args.workers,
                                args.log_level, args.access_log,
                                on_listen=lambda port: _announce(names, args.host, port, args))
            return 0
        server = serving.Server(args.models, options, args.host, args.port, args.log_level,
                                args.access_log)
    except (OSError, ValueError) as e:  # no such file, bad model, port taken, bad option
        print(f"python -m fw.inference.serve: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    _announce(names, args.host, server.port, args)
    server.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
