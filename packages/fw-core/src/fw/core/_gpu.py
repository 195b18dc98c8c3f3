"""The ``gpu`` backend, through CuPy. Optional: imported only when a gpu place is
asked for, and fw works without CuPy or a GPU.

Reference kernels are written against the NumPy API, and CuPy arrays implement
NumPy's dispatch protocols, so every op runs on the GPU through its reference
kernel unless it registers a faster ``gpu`` kernel (cuBLAS via CuPy, fused CUDA
source through ``cupy.ElementwiseKernel``/``RawKernel``).
"""

from __future__ import annotations

from fw.core.backend import Backend

_state = {"tried": False, "error": None, "backend": None}


class GPUBackend(Backend):
    name = "gpu"

    def __init__(self, cupy):
        self.cp = cupy
        self.xp = cupy
        self.array_types = (cupy.ndarray,)
        self.memory = _MemoryStats(cupy)

    def is_available(self) -> bool:
        return self.device_count() > 0

    def device_count(self) -> int:
        try:
            return int(self.cp.cuda.runtime.getDeviceCount())
        except Exception:
            return 0

    def device_index(self, array) -> int:
        return int(array.device.id)

    def asarray(self, host, index=0):
        with self.cp.cuda.Device(index):
            if getattr(host, "ndim", 1) == 0:  # CuPy copies a 0-d array through a Python
                # scalar, which drops the sign of a NaN: copy the bytes of a 1-element one
                return self.cp.asarray(host.reshape(1)).reshape(())
            return self.cp.asarray(host)

    def to_numpy(self, array):
        return self.cp.asnumpy(array)

    def make_generator(self, seed):
        return self.cp.random.Generator(self.cp.random.XORWOW(seed))

    def special(self):
        import cupyx.scipy.special

        return cupyx.scipy.special

    def synchronize(self, index=0):
        with self.cp.cuda.Device(index):
            self.cp.cuda.Stream.null.synchronize()


class _MemoryStats:
    """Paddle's/PyTorch's memory counters over CuPy's caching pool (one pool per
    device, blocks kept for reuse until `empty_cache`).

    CuPy's pool reports the bytes in use and the bytes held now, but no peak; the
    peaks are kept here by an allocator that wraps the pool's and reads its counters
    after each allocation (frees cannot raise a peak). The pool is CuPy's default
    one, so arrays a program makes with CuPy directly are counted too."""

    def __init__(self, cp):
        self.cp = cp
        self.pool = cp.get_default_memory_pool()
        self.peak_used: dict = {}
        self.peak_held: dict = {}
        cp.cuda.set_allocator(self._malloc)

    def _malloc(self, size):
        mem = self.pool.malloc(size)
        dev = mem.device_id
        used, held = self.pool.used_bytes(), self.pool.total_bytes()
        if used > self.peak_used.get(dev, 0):
            self.peak_used[dev] = used
        if held > self.peak_held.get(dev, 0):
            self.peak_held[dev] = held
        return mem

    def _on(self, index):
        return self.cp.cuda.Device(index)

    def allocated(self, index):
        with self._on(index):
            return int(self.pool.used_bytes())

    def reserved(self, index):
        with self._on(index):
            return int(self.pool.total_bytes())

    def max_allocated(self, index):
        return max(self.peak_used.get(index, 0), self.allocated(index))

    def max_reserved(self, index):
        return max(self.peak_held.get(index, 0), self.reserved(index))

    def reset_peak(self, index, which=("used", "held")):
        if "used" in which:
            self.peak_used[index] = self.allocated(index)
        if "held" in which:
            self.peak_held[index] = self.reserved(index)

    def empty_cache(self):
        """Give the pool's unused blocks back to the driver (arrays in use stay)."""
        self.pool.free_all_blocks()
        self.cp.get_default_pinned_memory_pool().free_all_blocks()


def backend() -> GPUBackend:
    """The gpu backend (made once), or a RuntimeError saying why there is none.
    `fw.core.place.get_backend` registers it."""
    if not _state["tried"]:
        _state["tried"] = True
        try:
            import cupy
        except Exception as e:  # ImportError, or a CUDA library failing to load
            _state["error"] = (f"the gpu device needs CuPy and an NVIDIA GPU: importing cupy "
                               f"failed ({type(e).__name__}: {e}); install it with "
                               f"`pip install fw-core[gpu]` (cupy-cuda12x)")
        else:
            b = GPUBackend(cupy)
            if b.is_available():
                _state["backend"] = b
            else:
                _state["error"] = "CuPy is installed but it sees no CUDA device"
    if _state["error"]:
        raise RuntimeError(_state["error"])
    return _state["backend"]
