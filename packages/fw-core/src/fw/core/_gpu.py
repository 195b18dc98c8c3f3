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
            return self.cp.asarray(host)

    def to_numpy(self, array):
        return self.cp.asnumpy(array)

    def synchronize(self, index=0):
        with self.cp.cuda.Device(index):
            self.cp.cuda.Stream.null.synchronize()


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
