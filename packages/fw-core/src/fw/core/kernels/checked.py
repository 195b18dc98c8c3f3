"""The last result a fused cpu kernel checked finite, per thread.

Why: the operand of one fused call is usually the result of the previous one (a
CNN's conv chain, an MLP), scanned for NaN/Inf a moment before; remembering it
(with fw's version counter of its memory) spares a second pass over every
activation (see fw.core.kernels.cpu.fused, "non-finite values"). The reference is
strong on purpose: the executor writes a result into a dying operand's buffer only
when nothing else holds the array, so a remembered array is never overwritten
there. The executor forgets it when a program run returns, so an output handed to
the caller (who may write into it through NumPy, unseen by the version counter) is
never trusted by a later call.
"""

from __future__ import annotations

import threading

from fw.core.tensor import array_version

__all__ = ["remember", "is_remembered", "forget"]

_local = threading.local()


def remember(a) -> None:
    """`a` was just checked: every element finite."""
    _local.rec = (a, array_version(a))


def is_remembered(a) -> bool:
    rec = getattr(_local, "rec", None)
    return rec is not None and rec[0] is a and rec[1] == array_version(a)


def forget() -> None:
    _local.rec = None
