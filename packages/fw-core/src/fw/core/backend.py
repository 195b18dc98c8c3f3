"""`Backend`: what fw needs from one kind of device (the interface a device
plugin implements).

A leaf module so that backends (the built-in cpu one in `fw.core.place`, the
optional gpu one in `fw.core._gpu`, plugins registered through the
``fw.backends`` entry-point group) depend on the interface and the registry in
`fw.core.place` depends on them, never the other way round.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Backend"]


class Backend:
    """What fw needs from one kind of device.

    name: the place kind ('cpu', 'gpu', …); xp: its NumPy-compatible array module;
    array_types: the array classes it owns.
    """

    name = "?"
    xp = np
    array_types: tuple = ()

    def is_available(self) -> bool:
        return True

    def device_count(self) -> int:
        return 1

    def device_index(self, array) -> int:
        return 0

    def asarray(self, host: np.ndarray, index: int):
        """Copy a NumPy array onto device `index`."""
        raise NotImplementedError

    def to_numpy(self, array) -> np.ndarray:
        raise NotImplementedError

    def synchronize(self, index: int = 0) -> None:
        pass

    def make_generator(self, seed: int):
        """A random generator for this device's arrays, with numpy.random.Generator's
        methods (random, standard_normal, integers, binomial, ...)."""
        return np.random.Generator(np.random.PCG64(seed))

    def special(self):
        """scipy.special's functions for this device's arrays (ImportError if none)."""
        import scipy.special

        return scipy.special
