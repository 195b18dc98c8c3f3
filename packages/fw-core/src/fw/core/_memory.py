"""Keep freed tensor memory in the process (glibc malloc tuning).

Tensors are NumPy arrays allocated with malloc. glibc serves blocks above its
mmap threshold (128 KiB, adapting upwards) with fresh ``mmap`` calls and gives
them back with ``munmap``, and trims the top of the heap back to the OS past
128 KiB; the next array of that size then page-faults on every 4 KiB page it
touches. A training step allocates and frees the same activation sizes over and
over, so this dominated some kernels (conv output + relu on a LeNet batch: 1.6
ms with faults, 0.4 ms without). PyTorch avoids it with a caching allocator; fw
gets the same effect by asking glibc to serve large blocks from the heap and to
keep freed heap memory (``mallopt``): peak memory stays resident, as it does
under PyTorch.

The tuning is process-wide: it changes how every malloc of the process behaves,
NumPy arrays that are not fw's included (a server or notebook would keep up to 1
GiB of freed memory resident). So ``import fw`` does not apply it, and neither
does inference. It is applied when the process starts training, on the first
``Tensor.backward()`` (a LeNet step then takes 0 page faults instead of ~850).
``FW_MALLOC_TUNING`` overrides that: ``1`` tunes at import, ``0`` never tunes.
Only glibc is tuned; other C libraries are left alone.
"""

from __future__ import annotations

import os
import sys

__all__ = ["tune_malloc", "tune_malloc_if_asked", "tune_malloc_for_training", "TUNED"]

_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3

TUNED = False
training_started = False  # Tensor.backward ran once (it calls tune_malloc_for_training)


def tune_malloc_if_asked() -> bool:
    """At import: apply the tuning when ``FW_MALLOC_TUNING=1``; whether it is applied."""
    if os.environ.get("FW_MALLOC_TUNING") == "1":
        return tune_malloc()
    return TUNED


def tune_malloc_for_training() -> bool:
    """On the first backward pass: apply the tuning unless ``FW_MALLOC_TUNING=0``."""
    global training_started
    training_started = True
    if os.environ.get("FW_MALLOC_TUNING") == "0":
        return TUNED
    return tune_malloc()


def tune_malloc() -> bool:
    """Apply the tuning once (process-wide); returns whether glibc accepted it."""
    global TUNED
    if TUNED or not sys.platform.startswith("linux"):
        return TUNED
    import ctypes  # only here: most processes never tune

    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl or another libc: nothing to tune
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = (mallopt(_M_MMAP_THRESHOLD, 32 << 20)  # glibc's maximum: blocks <= 32 MiB from the heap
          and mallopt(_M_TRIM_THRESHOLD, 1 << 30)  # keep up to 1 GiB of freed heap
          and mallopt(_M_TOP_PAD, 16 << 20))  # grow the heap in 16 MiB steps
    TUNED = bool(ok)
    return TUNED
