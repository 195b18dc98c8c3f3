"""Devices: places, the backend registry, and the current device.

A backend owns one kind of array (NumPy for ``cpu``, CuPy for ``gpu``). A tensor's
device is read off its array's type, so nothing per tensor records it. Kernels
are chosen per backend name; the NumPy reference kernels also run on any array
library that implements NumPy's dispatch protocols (``__array_function__``,
``__array_ufunc__``), which is how CuPy arrays run ops that have no GPU kernel.

Another package adds a device without editing fw-core by exposing a
`Backend` factory under the entry-point group ``fw.backends``; it is loaded the
first time a place of that kind is asked for.
"""

from __future__ import annotations

import re
import threading

import numpy as np

from fw.core.backend import Backend

__all__ = [
    "Place", "CPUPlace", "CUDAPlace", "CUDAPinnedPlace", "Backend", "register_backend",
    "get_backend", "backend_of", "set_device", "get_device", "current_place",
    "is_compiled_with_cuda", "device_count", "parse_place",
]


class Place:
    """A device: ``Place(cpu)`` or ``Place(gpu:N)``; ``tensor.place`` returns one.

    Places compare equal by kind and index; ``str(place)`` is the device string fw.set_device
    takes. Usually made by fw.CPUPlace() / fw.CUDAPlace(n) or from a string.

    Args:
        kind (str, optional): "cpu" or "gpu" (or a plugin backend's name). Default: "cpu".
        index (int, optional): The device index. Default: 0.

    Examples:
        >>> import fw
        >>> p = fw.to_tensor([1.0]).place
        >>> p, str(p), p == fw.CPUPlace()
        (Place(cpu), 'cpu', True)
        >>> fw.Place("gpu", 1)
        Place(gpu:1)
    """

    __slots__ = ("kind", "index")

    def __init__(self, kind: str = "cpu", index: int = 0):
        self.kind = kind
        self.index = int(index)

    def __repr__(self) -> str:
        return "Place(cpu)" if self.kind == "cpu" else f"Place({self.kind}:{self.index})"

    def __str__(self) -> str:
        return "cpu" if self.kind == "cpu" else f"{self.kind}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = parse_place(other)
        return isinstance(other, Place) and other.kind == self.kind and (
            self.kind == "cpu" or other.index == self.index)

    def __hash__(self) -> int:
        return hash((self.kind, 0 if self.kind == "cpu" else self.index))

    def is_cpu_place(self) -> bool:
        """Whether this is the CPU place.

        Returns:
            bool: True for ``Place(cpu)``.

        Examples:
            >>> import fw
            >>> fw.CPUPlace().is_cpu_place(), fw.CUDAPlace(0).is_cpu_place()
            (True, False)
        """
        return self.kind == "cpu"

    def is_gpu_place(self) -> bool:
        """Whether this is a GPU place (a CUDA device).

        Returns:
            bool: True for ``Place(gpu:N)``.

        Examples:
            >>> import fw
            >>> fw.CPUPlace().is_gpu_place(), fw.CUDAPlace(0).is_gpu_place()
            (False, True)
        """
        return self.kind == "gpu"

    def is_cuda_pinned_place(self) -> bool:
        """Whether this is Paddle's CUDA pinned host memory place. fw has no pinned
        place (``fw.CUDAPinnedPlace()`` is host memory), so this is always False.

        Returns:
            bool: False.

        Examples:
            >>> import fw
            >>> fw.CPUPlace().is_cuda_pinned_place()
            False
        """
        return False

    def gpu_device_id(self) -> int:
        """The device index of a GPU place (Paddle's name; same as `get_device_id`).

        Returns:
            int: the index N of ``Place(gpu:N)``; 0 for the CPU place.

        Examples:
            >>> import fw
            >>> fw.CUDAPlace(1).gpu_device_id()
            1
        """
        return self.index

    def get_device_id(self) -> int:
        """The device index of the place.

        Returns:
            int: the index N of ``Place(gpu:N)``; 0 for the CPU place.

        Examples:
            >>> import fw
            >>> fw.CUDAPlace(2).get_device_id(), fw.CPUPlace().get_device_id()
            (2, 0)
        """
        return self.index


def CPUPlace() -> Place:  # noqa: N802 - Paddle's name
    """The CPU place (``paddle.CPUPlace()``).

    Returns:
        fw.Place: the cpu place.

    Examples:
        >>> import fw
        >>> fw.CPUPlace()
        Place(cpu)
        >>> fw.to_tensor([1.0], place=fw.CPUPlace()).place
        Place(cpu)
    """
    return Place("cpu", 0)


def CUDAPlace(index: int = 0) -> Place:  # noqa: N802
    """The place of GPU number index (``paddle.CUDAPlace(0)``).

    Args:
        index (int, optional): The GPU index. Default: 0.

    Returns:
        fw.Place: the gpu place (using it needs a GPU).

    Examples:
        >>> import fw
        >>> fw.CUDAPlace(1)
        Place(gpu:1)
    """
    return Place("gpu", index)


def CUDAPinnedPlace() -> Place:  # noqa: N802 - host memory; fw keeps it as cpu
    """Paddle's page-locked host memory place; fw keeps such tensors in ordinary CPU memory.

    Returns:
        fw.Place: the cpu place.

    Examples:
        >>> import fw
        >>> fw.CUDAPinnedPlace()
        Place(cpu)
    """
    return Place("cpu", 0)


_PLACE_RE = re.compile(r"^\s*([a-z_]+)\s*(?::\s*(\d+))?\s*$")


def parse_place(device) -> Place:
    """'cpu' | 'gpu' | 'gpu:1' | 'cuda:0' | Place | int (gpu index) -> Place."""
    if isinstance(device, Place):
        return device
    if isinstance(device, int):
        return Place("gpu", device)
    if not isinstance(device, str):
        raise TypeError(f"device must be a string like 'cpu' or 'gpu:0', or a Place; "
                        f"got {type(device).__name__}")
    m = _PLACE_RE.match(device.lower())
    if not m:
        raise ValueError(f"cannot parse device {device!r}; expected 'cpu', 'gpu' or 'gpu:N'")
    kind, idx = m.group(1), int(m.group(2) or 0)
    if kind == "cuda":
        kind = "gpu"
    return Place(kind, idx)


class CPUBackend(Backend):
    name = "cpu"
    xp = np
    array_types = (np.ndarray,)

    def asarray(self, host, index=0):
        return np.asarray(host)

    def to_numpy(self, array):
        return array


_CPU = CPUBackend()
_BACKENDS: dict = {"cpu": _CPU}
_BY_ARRAY_TYPE: dict = {np.ndarray: _CPU}
_lock = threading.Lock()
# called with each backend registered: fw.core.kernels attaches its kernels for the
# device (and the host fallback) this way, so that this module imports no kernels
_REGISTER_HOOKS: list = []


def register_backend(backend: Backend) -> None:
    """Make a device kind available (called by plugins and the built-in gpu backend)."""
    with _lock:
        _BACKENDS[backend.name] = backend
        for t in backend.array_types:
            _BY_ARRAY_TYPE[t] = backend
    for hook in list(_REGISTER_HOOKS):
        hook(backend)


def _load_plugin(kind: str) -> bool:
    from importlib import metadata  # 20 ms of imports: only when a plugin is looked for

    try:
        eps = metadata.entry_points(group="fw.backends")
    except Exception:  # pragma: no cover - broken metadata must not break import
        return False
    for ep in eps:
        if ep.name == kind:
            factory = ep.load()
            register_backend(factory())
            return True
    return False


def get_backend(kind: str) -> Backend:
    b = _BACKENDS.get(kind)
    if b is not None:
        return b
    if kind == "gpu":
        from fw.core import _gpu  # CuPy is imported only when a gpu place is asked for

        register_backend(_gpu.backend())  # raises a RuntimeError saying why it cannot
        b = _BACKENDS.get(kind)
    elif _load_plugin(kind):
        b = _BACKENDS.get(kind)
    if b is None:
        raise RuntimeError(f"no backend for device kind {kind!r}: known kinds are "
                           f"{sorted(_BACKENDS)}; a plugin registers more through the "
                           f"'fw.backends' entry-point group")
    return b


def backend_of(array) -> Backend:
    """The backend owning an array (NumPy arrays are cpu)."""
    b = _BY_ARRAY_TYPE.get(type(array))
    if b is None:
        for t, bk in list(_BY_ARRAY_TYPE.items()):
            if isinstance(array, t):
                _BY_ARRAY_TYPE[type(array)] = bk
                return bk
        raise TypeError(f"no fw backend owns arrays of type {type(array).__module__}."
                        f"{type(array).__name__}")
    return b


def place_of(array) -> Place:
    b = _BY_ARRAY_TYPE.get(type(array)) or backend_of(array)
    if b is _CPU:
        return _CPU_PLACE
    return Place(b.name, b.device_index(array))


_CPU_PLACE = Place("cpu", 0)
_current = [_CPU_PLACE]


def set_device(device) -> Place:
    """Set the device new tensors are created on.

    Args:
        device (str|fw.Place): "cpu", "gpu" or "gpu:N".

    Returns:
        fw.Place: the new current place.

    Examples:
        >>> import fw
        >>> fw.set_device("cpu")
        Place(cpu)
        >>> fw.get_device()
        'cpu'
    """
    p = parse_place(device)
    b = get_backend(p.kind)
    if not b.is_available():
        raise RuntimeError(f"device {p} is not available: the {p.kind} backend found no device")
    if p.index >= b.device_count():
        raise ValueError(f"device {p} does not exist: {b.device_count()} {p.kind} device(s)")
    _current[0] = p
    return p


def get_device() -> str:
    """The current device as a string ("cpu" or "gpu:N").

    Returns:
        str: the device new tensors are created on.

    Examples:
        >>> import fw
        >>> fw.get_device()
        'cpu'
    """
    return str(_current[0])


def current_place() -> Place:
    return _current[0]


def is_compiled_with_cuda() -> bool:
    """Whether fw can use a CUDA GPU here (CuPy installed and a GPU visible).

    Returns:
        bool: True when the gpu backend is available.

    Examples:
        >>> import fw
        >>> isinstance(fw.is_compiled_with_cuda(), bool)
        True
    """
    try:
        return get_backend("gpu").is_available()
    except Exception:
        return False


def device_count(kind: str = "gpu") -> int:
    try:
        b = get_backend(kind)
    except Exception:
        return 0
    return b.device_count() if b.is_available() else 0
