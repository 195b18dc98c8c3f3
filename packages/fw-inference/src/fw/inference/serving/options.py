"""`ServingOptions`: the knobs of a server (batching, limits, timeouts, threads).

One frozen dataclass shared by the Python API, the command line and the worker
processes of ``--workers`` (which receive it as JSON: every field is a plain
number).
"""

from __future__ import annotations

import dataclasses
import json
import math

__all__ = ["ServingOptions"]

MiB = 1 << 20


@dataclasses.dataclass(frozen=True)
class ServingOptions:
    """How a server batches, bounds and times requests.

    Attributes:
        max_batch_size: the most rows (the summed leading dims of the requests) one
            model call takes; ``1`` turns dynamic batching off. A request with more
            rows than this runs alone.
        batch_timeout_ms: how long the first request of a batch waits for others
            (``0``: take only what is already queued).
        max_queue: requests waiting per model; one more is answered 503.
        max_body_bytes: the largest request body; a larger one is answered 413.
        request_timeout_s: the longest a request waits for its model (queue and
            run; then it is answered 504), and for its body to arrive (then 408).
        threads_per_model: worker threads per model, each with its own
            ``Predictor.clone()``.
        cpu_threads: ``Config.set_cpu_math_library_num_threads`` for models loaded
            from files (None: the Predictor's default).
        graceful_timeout_s: on shutdown, how long in-flight requests may take to
            finish before they are cancelled.
    """

    max_batch_size: int = 32
    batch_timeout_ms: float = 2.0
    max_queue: int = 1024
    max_body_bytes: int = 64 * MiB
    request_timeout_s: float = 60.0
    threads_per_model: int = 1
    cpu_threads: int | None = None
    graceful_timeout_s: float = 30.0

    def __post_init__(self):
        def positive_int(name, minimum=1):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
                raise ValueError(f"ServingOptions.{name} must be an int >= {minimum}, got {v!r}")

        def number(name, minimum, strict):
            v = getattr(self, name)
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            if not ok or v < minimum or (strict and v == minimum):
                rel = ">" if strict else ">="
                raise ValueError(f"ServingOptions.{name} must be a finite number {rel} "
                                 f"{minimum}, got {v!r}")

        for name in ("max_batch_size", "max_queue", "max_body_bytes", "threads_per_model"):
            positive_int(name)
        if self.cpu_threads is not None:
            positive_int("cpu_threads")
        number("batch_timeout_ms", 0, strict=False)
        number("request_timeout_s", 0, strict=True)
        number("graceful_timeout_s", 0, strict=False)

    @property
    def batching(self) -> bool:
        return self.max_batch_size > 1

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ServingOptions:
        return cls(**json.loads(text))
