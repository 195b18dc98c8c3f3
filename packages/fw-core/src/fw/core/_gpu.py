"""The ``gpu`` backend, through CuPy. Optional: imported only when a gpu place is
asked for, and fw works without CuPy or a GPU.

Reference kernels are written against the NumPy API, and CuPy arrays implement
NumPy's dispatch protocols, so every op runs on the GPU through its reference
kernel unless it registers a faster ``gpu`` kernel (cuBLAS via CuPy, fused CUDA
source through ``cupy.ElementwiseKernel``/``RawKernel``).
"""

from __future__ import annotations

from fw.core.place import Backend, register_backend

_state = {"tried": False, "error": None}


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


def ensure_registered() -> None:
    """Register the gpu backend, or raise a RuntimeError saying why it cannot be."""
    if not _state["tried"]:
        _state["tried"] = True
        try:
            import cupy
        except Exception as e:  # ImportError, or a CUDA library failing to load
            _state["error"] = (f"the gpu device needs CuPy and an NVIDIA GPU: importing cupy "
                               f"failed ({type(e).__name__}: {e}); install it with "
                               f"`pip install fw-core[gpu]` (cupy-cuda12x)")
            return
        b = GPUBackend(cupy)
        if not b.is_available():
            _state["error"] = "CuPy is installed but it sees no CUDA device"
            return
        register_backend(b)
    if _state["error"]:
        raise RuntimeError(_state["error"])
