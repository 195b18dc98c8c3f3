"""Kernels of the gpu backend (CuPy), attached to the op table when the backend is
first made (`fw.core._gpu.backend`), so nothing here is imported without a GPU.

Most ops need none: their NumPy reference runs on CuPy arrays through NumPy's
dispatch protocols. A kernel here exists where the reference is right but slow on a
GPU (one module per op family, like ``kernels/cpu``); the device tests compare each
with the reference (packages/fw-core/tests/test_device_ops.py with
FW_TEST_DEVICE=gpu).

``conv``, ``pool``, ``softmax`` and ``norm`` hold CUDA source (``cupy.RawModule``),
compiled on first use; ``_raw`` says how to turn each of them off (``FW_GPU_RAW=0``,
``FW_GPU_DISABLE=...``) and packages/fw-core/tests/test_gpu_kernels.py compares each
with the reference on the GPU.
"""

from fw.core.kernels.gpu import conv, dtypes, linalg, norm, optimizer, pool, softmax

__all__ = ["attach"]


def attach(be) -> None:
    for mod in (linalg, dtypes, optimizer, conv, pool, softmax, norm):
        for name, fn in mod.kernels(be.cp).items():
            from fw.core.ops._registry import OPS

            OPS[name].kernels["gpu"] = fn
    # cuDNN (cudnn.py, FW_GPU_CUDNN) in front of the conv kernels above, which run what
    # it does not take; nothing when it is off or libcudnn is absent
    from fw.core.kernels.gpu import cudnn
    from fw.core.ops._registry import OPS

    names = ("conv", "conv_transpose", "conv_grad_weight")
    for name, fn in cudnn.kernels(be.cp, {n: OPS[n].kernels.get("gpu") or OPS[n].reference
                                          for n in names}).items():
        OPS[name].kernels["gpu"] = fn
    # the runtime's generated kernels (fusion.py: elementwise chains of to_static programs)
    from fw.core.kernels.gpu import fusion

    fusion.attach(be)
