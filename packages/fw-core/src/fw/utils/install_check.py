"""``fw.utils.run_check`` and ``require_version``: is this fw install usable, and new enough."""

from __future__ import annotations

import re

import numpy as np

__all__ = ["run_check", "require_version"]


def _parse(version: str, fname: str, arg: str) -> tuple[int, ...]:
    if not isinstance(version, str) or not re.fullmatch(r"\d+(\.\d+)*", version):
        raise ValueError(f"{fname}: {arg} must be a version string like '0.1.0', got "
                         f"{version!r}")
    return tuple(int(p) for p in version.split("."))


def require_version(min_version: str, max_version: str | None = None) -> None:
    """Raise if the installed fw is older than ``min_version`` or newer than ``max_version``.

    Args:
        min_version (str): the lowest accepted version, e.g. ``"0.1"``.
        max_version (str, optional): the highest accepted version. Default None (no limit).

    Returns:
        None.

    Examples:
        >>> import fw
        >>> from fw.utils import require_version
        >>> require_version("0.0.1")
    """
    from fw.core import __version__

    have = _parse(__version__, "require_version", "the installed version")
    lo = _parse(min_version, "require_version", "min_version")
    n = max(len(have), len(lo))
    pad = lambda v: v + (0,) * (n - len(v))  # noqa: E731
    if pad(have) < pad(lo):
        raise Exception(  # Paddle raises a plain Exception here; keep it catchable as such
            f"require_version: fw {min_version} or higher is required, but {__version__} is "
            f"installed")
    if max_version is not None:
        hi = _parse(max_version, "require_version", "max_version")
        n = max(len(have), len(hi))
        pad = lambda v: v + (0,) * (n - len(v))  # noqa: E731
        if pad(have) > pad(hi):
            raise Exception(
                f"require_version: fw between {min_version} and {max_version} is required, "
                f"but {__version__} is installed")


def run_check() -> None:
    """Check that fw works here: run a small matmul and its gradient on CPU (and on the GPU
    when one is usable) against NumPy, and print the result.

    Returns:
        None. Raises RuntimeError naming the device that failed.

    Examples:
        >>> import fw
        >>> from fw.utils import run_check
        >>> run_check()
        Running verify fw program ...
        fw works well on ...
    """
    import fw

    print("Running verify fw program ...")
    devices = ["cpu"]
    if fw.device.cuda.is_available():
        devices.append("gpu:0")
    a = np.arange(6, dtype="float32").reshape(2, 3)
    b = np.ones((3, 2), dtype="float32")
    previous = fw.get_device()
    try:
        for dev in devices:
            fw.set_device(dev)
            x = fw.to_tensor(a, stop_gradient=False)
            y = fw.matmul(x, fw.to_tensor(b)).sum()
            y.backward()
            ok = np.allclose(float(y), (a @ b).sum()) and np.allclose(
                x.grad.numpy(), np.ones((2, 2), "float32") @ b.T)
            if not ok:
                raise RuntimeError(f"run_check: fw computed wrong results on {dev}")
    finally:
        fw.set_device(previous)
    print(f"fw works well on {len(devices)} device(s): {', '.join(devices)}.")
