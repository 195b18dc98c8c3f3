"""Arrays promised never to change again, each with a stamp.

Why: a oneDNN convolution wants its weights in a blocked layout of its own; a
weight that may change (training) must be reordered on every call, but a
predictor's weights never change, and reordering them per call cost more than
the convolution itself on ResNet-18 (ONEDNN_VERBOSE). A frozen array gets a
stamp; the native kernels take ``(address, stamp)`` as the name of bytes that
never change and reorder them once ("weight prepacking", as oneDNN's docs and
PyTorch's mkldnn weight cache do).

The stamp is unique for the array's lifetime: the entry is dropped when the array
is collected, so a new array at a recycled ``id`` or address gets a new stamp and
never meets the old packed copy. Freezing also makes the array read-only; an
array that is a view of a writeable array is not frozen (its bytes could still
change through the base), and neither is one whose owner re-enables writing
(``flags.writeable = True``) — that is checked on every lookup.
"""

from __future__ import annotations

import itertools
import weakref

import numpy as np

_stamps: dict[int, int] = {}
_next = itertools.count(1)


def _owner_writeable(a: np.ndarray) -> bool:
    base = a.base
    while isinstance(base, np.ndarray):
        if base.flags.writeable:
            return True
        base = base.base
    return False


def freeze(a: np.ndarray) -> int:
    """Make `a` read-only and give it a stamp (returned; 0 when `a` cannot be
    frozen because its bytes stay writeable through a base array)."""
    if not isinstance(a, np.ndarray):
        return 0
    key = id(a)
    stamp = _stamps.get(key)
    if stamp is not None:
        return stamp
    a.flags.writeable = False
    if _owner_writeable(a):
        return 0
    stamp = next(_next)
    _stamps[key] = stamp
    weakref.finalize(a, _stamps.pop, key, None)
    return stamp


def stamp(a) -> int:
    """The stamp of a frozen array, else 0 (one dict lookup: kernels call it per run)."""
    s = _stamps.get(id(a), 0)
    if s and a.flags.writeable:  # someone turned writing back on: no promise any more
        _stamps.pop(id(a), None)
        return 0
    return s
