"""What this fw build supports (Paddle's ``paddle.device.is_compiled_with_*`` family), the
device context managers, and the places of hardware fw does not support.

fw runs on CPUs and NVIDIA GPUs (through CuPy). IPU, XPU and custom-device places raise
``UnsupportedError`` naming the device, as Paddle's CPU build does (docs/paddle_differences.md).
"""

from __future__ import annotations

import contextlib

from fw.core import place as _pl
from fw.core import random as _random
from fw.core.errors import UnsupportedError

__all__ = ["is_compiled_with_cinn", "is_compiled_with_custom_device",
           "is_compiled_with_distribute", "is_compiled_with_ipu", "is_compiled_with_rocm",
           "is_compiled_with_xpu", "get_all_custom_device_type", "get_available_custom_device",
           "get_cudnn_version", "is_current_stream_capturing", "ipc_collect", "device_guard",
           "device", "StreamContext", "IPUPlace", "XPUPlace", "manual_seed", "get_rng_state",
           "set_rng_state", "get_stream_from_external", "XPUPinnedPlace", "get_cuda_rng_state",
           "set_cuda_rng_state"]


def is_compiled_with_cinn() -> bool:
    """False: fw has no CINN compiler (its IR passes and fused kernels play that part).

    Returns:
        bool.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.device.is_compiled_with_cinn()
            False
    """
    return False


def is_compiled_with_rocm() -> bool:
    """False: fw's GPU path is CUDA (CuPy) only.

    Returns:
        bool.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.device.is_compiled_with_rocm()
            False
    """
    return False


def is_compiled_with_xpu() -> bool:
    """False: fw does not support Kunlun XPUs.

    Returns:
        bool.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.device.is_compiled_with_xpu()
            False
    """
    return False


def is_compiled_with_ipu() -> bool:
    """False: fw does not support Graphcore IPUs.

    Returns:
        bool.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.device.is_compiled_with_ipu()
            False
    """
    return False


def is_compiled_with_custom_device(device_type: str) -> bool:
    """False for every name: fw has no custom-device plugin interface.

    Args:
        device_type (str): a custom device name, e.g. "npu".

    Returns:
        bool.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.device.is_compiled_with_custom_device("npu")
            False
    """
    return False


def is_compiled_with_distribute() -> bool:
    """Whether fw-distributed (collectives, fleet) is installed.

    Returns:
        bool.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> isinstance(fw.device.is_compiled_with_distribute(), bool)
            True
    """
    import importlib.util

    return importlib.util.find_spec("fw.distributed") is not None


def get_all_custom_device_type() -> list:
    """The custom device kinds: always empty in fw.

    Returns:
        list[str].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.device.get_all_custom_device_type()
            []
    """
    return []


def get_available_custom_device() -> list:
    """The custom devices present: always empty in fw.

    Returns:
        list[str].

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.device.get_available_custom_device()
            []
    """
    return []


def get_cudnn_version():
    """The cuDNN version CuPy sees (an int such as 8902), or None without a GPU or cuDNN.

    Returns:
        int|None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> v = fw.device.get_cudnn_version()
            >>> v is None or isinstance(v, int)
            True
    """
    if not _pl.device_count("gpu"):
        return None
    try:
        from cupy.cuda import cudnn
    except Exception:  # CuPy built without cuDNN: the query has no answer
        return None
    return int(cudnn.getVersion())


def is_current_stream_capturing() -> bool:
    """Whether the current CUDA stream is capturing a CUDA graph (False on CPU).

    Returns:
        bool.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.device.is_current_stream_capturing()
            False
    """
    if not _pl.device_count("gpu"):
        return False
    import cupy

    return bool(cupy.cuda.get_current_stream().is_capturing())


def ipc_collect() -> None:
    """Release GPU memory held for CUDA IPC: fw shares no memory by IPC, so nothing to do.

    Returns:
        None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.device.ipc_collect()
    """
    return None


@contextlib.contextmanager
def device_guard(device):
    """Run the block with ``device`` as the current device, then restore the previous one.

    Args:
        device (str|Place|int): "cpu", "gpu:0", a Place, or a GPU index.

    Returns:
        a context manager.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> with fw.device.device_guard("cpu"):
            ...     fw.get_device()
            'cpu'
    """
    if isinstance(device, int) and not isinstance(device, bool):
        device = f"gpu:{device}"
    previous = _pl.get_device()
    _pl.set_device(device)
    try:
        yield
    finally:
        _pl.set_device(previous)


device = device_guard  # paddle.device.device: the same context manager (torch.cuda.device style)


class StreamContext(contextlib.AbstractContextManager):
    """Queue the block's GPU work on ``stream`` (None: leave the current stream).

    Args:
        stream (fw.device.Stream, optional): the stream.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> with fw.device.StreamContext(None):
            ...     pass
    """

    def __init__(self, stream=None):
        from fw.device.streams import stream_guard

        self._cm = stream_guard(stream)

    def __enter__(self):
        return self._cm.__enter__()

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def _unsupported(what: str):
    raise UnsupportedError(f"{what}: not supported on this device: fw runs on CPUs and NVIDIA "
                           f"GPUs only (see docs/paddle_differences.md)")


def IPUPlace():  # noqa: N802 - Paddle's name
    """Graphcore IPU place: not supported by fw; raises UnsupportedError.

    Returns:
        None; it always raises UnsupportedError (a NotImplementedError).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> try:
            ...     fw.device.IPUPlace()
            ... except NotImplementedError as e:
            ...     print("not supported" in str(e))
            True
    """
    _unsupported("IPUPlace")


def XPUPlace(dev_id: int = 0):  # noqa: N802 - Paddle's name
    """Kunlun XPU place: not supported by fw; raises UnsupportedError.

    Args:
        dev_id (int): the XPU index.

    Returns:
        None; it always raises UnsupportedError (a NotImplementedError).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> try:
            ...     fw.device.XPUPlace(0)
            ... except NotImplementedError as e:
            ...     print("not supported" in str(e))
            True
    """
    _unsupported("XPUPlace")


def XPUPinnedPlace():  # noqa: N802 - Paddle's name
    """Kunlun XPU pinned host memory: not supported by fw; raises UnsupportedError.

    Returns:
        None; it always raises UnsupportedError (a NotImplementedError).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> try:
            ...     fw.XPUPinnedPlace()
            ... except NotImplementedError:
            ...     print("raised")
            raised
    """
    _unsupported("XPUPinnedPlace")


def get_cuda_rng_state() -> list:
    """The random-generator state of each GPU (an empty list without a GPU, as Paddle's CPU
    build answers).

    Returns:
        list, one state per GPU.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> isinstance(fw.get_cuda_rng_state(), list)
            True
    """
    if not _pl.device_count("gpu"):
        return []
    return _random.get_rng_state("gpu")


def set_cuda_rng_state(state_list) -> None:
    """Restore the GPU generators from ``get_cuda_rng_state()``'s list (nothing to restore
    without a GPU).

    Args:
        state_list (list): the states.

    Returns:
        None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.set_cuda_rng_state(fw.get_cuda_rng_state())
    """
    if not state_list:
        return
    if not _pl.device_count("gpu"):
        raise UnsupportedError("set_cuda_rng_state: no GPU here to restore a GPU state into")
    _random.set_rng_state(state_list, "gpu")


def get_stream_from_external(data_ptr: int, device=None):
    """Wrap an externally created CUDA stream: not supported by fw (its streams are CuPy's);
    raises UnsupportedError.

    Args:
        data_ptr (int): the cudaStream_t address.
        device (str|Place, optional): the GPU.

    Returns:
        None; it always raises UnsupportedError (a NotImplementedError).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> try:
            ...     fw.device.get_stream_from_external(0)
            ... except NotImplementedError:
            ...     print("raised")
            raised
    """
    _unsupported("get_stream_from_external")


def manual_seed(seed: int) -> None:
    """Seed every random generator (CPU and GPU): ``fw.seed(seed)``.

    Args:
        seed (int): the seed.

    Returns:
        None.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.device.manual_seed(3)
            >>> a = fw.rand([2]).tolist(); fw.device.manual_seed(3)
            >>> a == fw.rand([2]).tolist()
            True
    """
    _random.seed(seed)


get_rng_state = _random.get_rng_state
set_rng_state = _random.set_rng_state
