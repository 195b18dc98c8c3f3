"""Framework-level odds and ends of Paddle's top-level API: `Size`, the
``batch`` reader decorator, and the flags registry."""

from __future__ import annotations

import math

__all__ = ["Size", "batch", "set_flags", "get_flags", "register_flag"]


class Size(tuple):
    """A shape: a tuple of ints (Paddle 3's ``paddle.Size``, PyTorch's ``torch.Size``).

    Args:
        dims (iterable of int, optional): The sizes. Default: ().

    Examples:
        >>> import fw
        >>> s = fw.Size([2, 3])
        >>> s, s.numel(), s[1:]
        (fw.Size([2, 3]), 6, fw.Size([3]))
    """

    def __new__(cls, dims=()):
        return super().__new__(cls, (int(d) for d in dims))

    def numel(self) -> int:
        """The number of elements of a tensor of this shape.

        Returns:
            int: the product of the sizes (1 for ``fw.Size([])``).

        Examples:
            >>> import fw
            >>> fw.Size([2, 3, 4]).numel(), fw.Size([]).numel()
            (24, 1)
        """
        return math.prod(self)

    def __repr__(self) -> str:
        return f"fw.Size({list(self)})"

    def __getitem__(self, i):
        r = super().__getitem__(i)
        return Size(r) if isinstance(i, slice) else r


def batch(reader, batch_size, drop_last=False):
    """Wrap a sample reader into a reader of batches (Paddle's legacy ``paddle.batch``).

    Args:
        reader (callable): A function returning an iterable of samples.
        batch_size (int): The number of samples per batch.
        drop_last (bool, optional): Drop the last batch when it is short. Default: False.

    Returns:
        callable: a function returning an iterator of lists of samples.

    Examples:
        >>> import fw
        >>> batches = fw.batch(lambda: range(5), batch_size=2)
        >>> list(batches())
        [[0, 1], [2, 3], [4]]
    """
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
    """Set Paddle-style global flags (``FLAGS_*``).

    Flags fw acts on (e.g. ``FLAGS_check_nan_inf``) take effect at once; others are stored
    and returned by get_flags.

    Args:
        flags (dict): {flag name: value}; names start with "FLAGS_".

    Returns:
        None

    Examples:
        >>> import fw
        >>> fw.set_flags({"FLAGS_docs_example": 3})
        >>> fw.get_flags("FLAGS_docs_example")
        {'FLAGS_docs_example': 3}
    """
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
    """The values of flags set with set_flags.

    Args:
        flags (str|list[str]): One flag name or a list of them.

    Returns:
        dict: {flag name: value}.

    Examples:
        >>> import fw
        >>> fw.set_flags({"FLAGS_docs_example": True})
        >>> fw.get_flags(["FLAGS_docs_example"])
        {'FLAGS_docs_example': True}
    """
    names = [flags] if isinstance(flags, str) else list(flags)
    out = {}
    for k in names:
        if k not in _FLAGS:
            raise ValueError(f"get_flags: flag {k!r} has not been set")
        out[k] = _FLAGS[k]
    return out
