"""Framework-level odds and ends of Paddle's top-level API: `Size`, the
``batch`` reader decorator, and the flags registry."""

from __future__ import annotations

import math

__all__ = ["Size", "batch", "set_flags", "get_flags", "register_flag"]


class Size(tuple):
    """A shape: a tuple of ints (Paddle 3's ``paddle.Size``, PyTorch's ``torch.Size``)."""

    def __new__(cls, dims=()):
        return super().__new__(cls, (int(d) for d in dims))

    def numel(self) -> int:
        return math.prod(self)

    def __repr__(self) -> str:
        return f"fw.Size({list(self)})"

    def __getitem__(self, i):
        r = super().__getitem__(i)
        return Size(r) if isinstance(i, slice) else r


def batch(reader, batch_size, drop_last=False):
    """Wrap a sample reader (a callable returning an iterable) into one yielding
    lists of `batch_size` samples; the last short batch is kept unless
    `drop_last`."""
    if not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f"batch: batch_size must be a positive int, got {batch_size!r}")

    def batch_reader():
        buf = []
        for sample in reader():
            buf.append(sample)
            if len(buf) == batch_size:
                yield buf
                buf = []
        if buf and not drop_last:
            yield buf

    return batch_reader


# Paddle's global FLAGS_*: fw acts on the ones a package registered a handler for
# (`register_flag`; fw-autograd registers FLAGS_check_nan_inf -> anomaly mode);
# every other FLAGS_ name is recorded (so scripts that tune Paddle's allocator
# keep running) and reported back by get_flags, and has no effect.
_FLAGS: dict = {}
_ACTING: dict = {}


def register_flag(name: str, handler) -> None:
    """Let a package act on a flag: `handler(value)` runs on each set_flags of it
    (and at once if the flag was already set)."""
    _ACTING[name] = handler
    if name in _FLAGS:
        handler(_FLAGS[name])


def set_check_nan_inf(on) -> None:
    """Turn fw-core's eager NaN/Inf check of every op's outputs on or off (what
    ``set_flags({"FLAGS_check_nan_inf": on})`` does, with fw-autograd's anomaly mode)."""
    # the eager per-op check lives in fw-core (fw.core._observe); fw-autograd's
    # handler calls this too and adds anomaly mode (backward and to_static programs)
    from fw.core import _observe

    _observe.set_check_nan_inf(on)


_ACTING["FLAGS_check_nan_inf"] = set_check_nan_inf


def set_flags(flags: dict) -> None:
    if not isinstance(flags, dict):
        raise TypeError(f"set_flags expects a dict of FLAGS_* names to values, got "
                        f"{type(flags).__name__}")
    for k, v in flags.items():
        if not isinstance(k, str) or not k.startswith("FLAGS_"):
            raise ValueError(f"set_flags: {k!r} is not a flag name (they start with 'FLAGS_')")
        _FLAGS[k] = v
        if k in _ACTING:
            _ACTING[k](v)


def get_flags(flags) -> dict:
    names = [flags] if isinstance(flags, str) else list(flags)
    out = {}
    for k in names:
        if k not in _FLAGS:
            raise ValueError(f"get_flags: flag {k!r} has not been set")
        out[k] = _FLAGS[k]
    return out
