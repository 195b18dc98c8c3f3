"""A 'fake' device backend for tests of the device plugin mechanism and of kernels on
a device's arrays (and an example for plugin authors).

Its arrays are a NumPy subclass that behaves like a GPU library's arrays where it
matters to kernels: NumPy functions and ufuncs called on them run (as CuPy's
``__array_function__``/``__array_ufunc__`` do) and give fake arrays back, but
mixing them with host ndarrays raises TypeError, as CuPy does, and
``np.asarray``/``np.zeros(shape)`` give host arrays, which the device tests catch.
So a kernel that passes on this device on a machine without a GPU is free of the
host-array mistakes that would break it on CuPy. A real plugin exposes its factory
in its package metadata::

    [project.entry-points."fw.backends"]
    mydevice = "my_package.backend:MyBackend"
"""

import types

import numpy as np

from fw.core.place import Backend

_ND = np.ndarray


def _to_fake(r):
    if type(r) is _ND:
        return r.view(FakeArray)
    if isinstance(r, np.generic):  # CuPy gives 0-d arrays where NumPy gives scalars
        return np.asarray(r).view(FakeArray)
    if isinstance(r, tuple):
        return tuple(_to_fake(x) for x in r)
    if isinstance(r, list):
        return [_to_fake(x) for x in r]
    return r


def _reject_host(what, items):
    for a in items:
        if type(a) is _ND:
            raise TypeError(f"{what}: a host numpy.ndarray {a.dtype}{list(a.shape)} mixed with "
                            f"fake-device arrays (move it to the device first)")
        if isinstance(a, (list, tuple)):
            _reject_host(what, a)


class _Flags:
    """CuPy's array flags: the contiguity ones, no `writeable` (device memory has none)."""

    def __init__(self, f):
        self.c_contiguous, self.f_contiguous, self.owndata = \
            f.c_contiguous, f.f_contiguous, f.owndata

    def __getitem__(self, key):
        return getattr(self, {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
                              "OWNDATA": "owndata"}[key])


class FakeArray(np.ndarray):
    """An array living on the 'fake' device."""

    @property
    def flags(self):
        return _Flags(super().flags)

    def __getitem__(self, key):  # CuPy gives 0-d arrays where NumPy gives scalars
        r = super().__getitem__(key)
        return np.asarray(r).view(FakeArray) if isinstance(r, np.generic) else r

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _reject_host(f"{ufunc.__name__}.{method}", inputs)
        _reject_host(f"{ufunc.__name__}.{method}", kwargs.get("out", ()) or ())
        ins = [x.view(_ND) if isinstance(x, FakeArray) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(x.view(_ND) if isinstance(x, FakeArray) else x
                                  for x in kwargs["out"])
        return _to_fake(getattr(ufunc, method)(*ins, **kwargs))

    def __array_function__(self, func, types_, args, kwargs):
        # check what the caller passed, then run NumPy's implementation on plain views
        # (a device library's functions are its own code: their insides must not be
        # held to the rule the caller is)
        _reject_host(func.__name__, args)
        _reject_host(func.__name__, kwargs.values())
        return _to_fake(func(*_plain(args), **dict(zip(kwargs, _plain(kwargs.values())))))


def _plain(items):
    out = []
    for x in items:
        if isinstance(x, FakeArray):
            x = x.view(_ND)
        elif isinstance(x, (list, tuple)):
            x = type(x)(_plain(x))
        out.append(x)
    return out


# the functions of a device's module that take host data
_HOST_IN = {"asarray", "array", "asanyarray", "ascontiguousarray", "copyto"}


class _FakeModule:
    """The fake device's array module (what ``cupy`` is to ``numpy``): NumPy, or any
    object with NumPy-like functions, with the arrays it returns on the device."""

    def __init__(self, mod):
        self._mod = mod

    def __getattr__(self, name):
        f = getattr(self._mod, name)
        if isinstance(f, types.ModuleType):
            return _FakeModule(f)
        if isinstance(f, type) or not callable(f):
            return f

        def call(*a, **k):
            if name not in _HOST_IN:  # like cupy.<name>, which refuses numpy arrays
                _reject_host(f"xp.{name}", a)
                _reject_host(f"xp.{name}", k.values())
            return _to_fake(f(*_plain(a), **dict(zip(k, _plain(k.values())))))
        return call


class FakeBackend(Backend):
    name = "fake"
    array_types = (FakeArray,)
    xp = _FakeModule(np)

    def device_count(self):
        return 2

    def asarray(self, host, index=0):
        return np.array(host).view(FakeArray)

    def to_numpy(self, array):
        return np.asarray(array).view(_ND)

    def make_generator(self, seed):
        return _FakeModule(super().make_generator(seed))

    def special(self):
        return _FakeModule(super().special())
