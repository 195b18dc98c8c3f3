"""Argument checks shared by fw.vision.ops: every error names the op, the argument,
its shape and dtype (STYLE.md habit 7), and inputs are read into NumPy once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import fw

FLOATS = ("float16", "float32", "float64")
INTS = ("int32", "int64")


def is_tensor(x) -> bool:
    return isinstance(x, fw.Tensor)


def describe(x) -> str:
    a = array_of(x)
    return f"shape {list(a.shape)} and dtype {a.dtype}"


def array_of(x) -> np.ndarray:
    """The values of a Tensor, array or nested list as a NumPy array (no copy for arrays)."""
    if isinstance(x, fw.Tensor):
        return np.asarray(x.numpy())
    return np.asarray(x)


def check(x, op: str, arg: str, *, dtypes: Sequence[str] | None = None,
          ndim: int | Sequence[int] | None = None, last: int | None = None,
          optional: bool = False) -> np.ndarray | None:
    """Read `x` as an array and check its dtype family, rank and last dimension."""
    if x is None:
        if optional:
            return None
        raise TypeError(f"{op}: argument '{arg}' is required, got None")
    if not isinstance(x, (fw.Tensor, np.ndarray, list, tuple)):
        raise TypeError(f"{op}: argument '{arg}' must be a Tensor, got {type(x).__name__}")
    a = array_of(x)
    if dtypes is not None and str(a.dtype) not in dtypes:
        raise TypeError(f"{op}: argument '{arg}' must have dtype in {list(dtypes)}, got "
                        f"{describe(a)}")
    if ndim is not None:
        ranks = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if a.ndim not in ranks:
            want = " or ".join(f"{r}-D" for r in ranks)
            raise ValueError(f"{op}: argument '{arg}' must be {want}, got {describe(a)}")
    if last is not None and (a.ndim == 0 or a.shape[-1] != last):
        raise ValueError(f"{op}: argument '{arg}' must have last dimension {last}, got "
                         f"{describe(a)}")
    return a


def pair(v, op: str, arg: str) -> tuple[int, int]:
    """An int or a pair of ints (Paddle's Size2)."""
    if isinstance(v, (int, np.integer)):
        v = (int(v), int(v))
    try:
        a, b = (int(t) for t in v)
    except (TypeError, ValueError):
        raise ValueError(f"{op}: argument '{arg}' must be an int or a pair of ints, got "
                         f"{v!r}") from None
    return a, b


def positive_pair(v, op: str, arg: str) -> tuple[int, int]:
    a, b = pair(v, op, arg)
    if a <= 0 or b <= 0:
        raise ValueError(f"{op}: argument '{arg}' must be positive, got {v!r}")
    return a, b


def floats(v, op: str, arg: str) -> list[float]:
    """A float or a sequence of floats as a list."""
    if isinstance(v, (int, float, np.floating, np.integer)):
        return [float(v)]
    try:
        return [float(t) for t in v]
    except (TypeError, ValueError):
        raise TypeError(f"{op}: argument '{arg}' must be a float or a sequence of floats, "
                        f"got {v!r}") from None


def boxes_num_split(boxes_num, n_boxes: int, batch: int, op: str) -> np.ndarray:
    """The image index of every box from Paddle's ``boxes_num`` (boxes per image)."""
    num = check(boxes_num, op, "boxes_num", dtypes=INTS, ndim=1)
    if num.shape[0] != batch:
        raise ValueError(f"{op}: argument 'boxes_num' must have one entry per image of x "
                         f"(batch {batch}), got {describe(num)}")
    if (num < 0).any() or int(num.sum()) != n_boxes:
        raise ValueError(f"{op}: argument 'boxes_num' must be non-negative and sum to the "
                         f"number of boxes ({n_boxes}), got {num.tolist()}")
    return np.repeat(np.arange(batch), num)
