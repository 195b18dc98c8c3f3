"""A 'fake' device backend for tests of the device plugin mechanism (and an
example for plugin authors): its arrays are a NumPy subclass, so NumPy's own
dispatch runs the reference kernels on them, as CuPy's protocols do for CuPy
arrays. A real plugin exposes its factory in its package metadata::

    [project.entry-points."fw.backends"]
    mydevice = "my_package.backend:MyBackend"
"""

import numpy as np

from fw.core.place import Backend


class FakeArray(np.ndarray):
    """An array living on the 'fake' device."""


class FakeBackend(Backend):
    name = "fake"
    array_types = (FakeArray,)

    def device_count(self):
        return 2

    def asarray(self, host, index=0):
        return np.array(host).view(FakeArray)

    def to_numpy(self, array):
        return np.asarray(array).view(np.ndarray)
