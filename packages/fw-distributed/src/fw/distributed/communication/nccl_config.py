"""``paddle.distributed.create_nccl_config``: the NCCL communicator settings
Paddle hands to ``new_group(nccl_config=...)``.

Paddle returns None whenever its collective backend is not NCCL (so a CPU build
always gets None); fw does the same when its NCCL engine cannot run (no CuPy
with NCCL, or no GPU). Where it can, the settings are checked and kept in an
`NCCLConfig`; fw's NCCL engine (communication/_engine_nccl.py) creates
communicators with NCCL's defaults and does not apply them yet — that path is
GPU-only and unverified here (see docs/paddle_differences.md).
"""
from __future__ import annotations

__all__ = ["NCCLConfig", "create_nccl_config"]

# the keys of Paddle's NCCLConfig message and their types (fleet/base/topology.py)
_KEYS = {"commName": str, "ll_buffsize": int, "ll128_buffsize": int, "simple_buffsize": int,
         "buffsize_align": int, "nchannels": int, "algoStr": str, "protoStr": str}


class NCCLConfig:
    """NCCL communicator settings (Paddle's ``core.NCCLConfig``): the keys of
    `create_nccl_config`'s dict as attributes.

    Args:
        **settings: ``commName``, ``ll_buffsize``, ``ll128_buffsize``,
            ``simple_buffsize``, ``buffsize_align``, ``nchannels``, ``algoStr``,
            ``protoStr``.

    Examples:
        >>> import fw
        >>> from fw.distributed.communication.nccl_config import NCCLConfig
        >>> NCCLConfig(commName="tp", nchannels=4).nchannels
        4
    """

    def __init__(self, **settings):
        for k, v in settings.items():
            t = _KEYS.get(k)
            if t is None:
                raise ValueError(f"fw.distributed.create_nccl_config: unknown key {k!r} (known: "
                                 f"{sorted(_KEYS)})")
            if isinstance(v, bool) or not isinstance(v, t):
                raise TypeError(f"fw.distributed.create_nccl_config: {k} must be a "
                                f"{t.__name__}, got {v!r}")
            if t is int and v < 0:
                raise ValueError(f"fw.distributed.create_nccl_config: {k} must be >= 0, got {v}")
        self._settings = dict(settings)
        for k in _KEYS:
            setattr(self, k, settings.get(k))

    def to_dict(self) -> dict:
        """The settings given (unset keys left out).

        Returns:
            dict: key -> value.

        Examples:
            >>> import fw
            >>> from fw.distributed.communication.nccl_config import NCCLConfig
            >>> NCCLConfig(algoStr="Ring").to_dict()
            {'algoStr': 'Ring'}
        """
        return dict(self._settings)

    def __repr__(self):
        return f"NCCLConfig({self._settings})"


def create_nccl_config(nccl_config=None):
    """Make the NCCL settings object for a process group, or None where NCCL is not the
    backend (as Paddle: a CPU build always returns None).

    Args:
        nccl_config (dict, optional): ``commName`` (str), ``ll_buffsize``,
            ``ll128_buffsize``, ``simple_buffsize``, ``buffsize_align``, ``nchannels``
            (int), ``algoStr``, ``protoStr`` (str). Default: None.

    Returns:
        NCCLConfig|None: the settings, or None without an NCCL engine or without a dict.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> print(dist.create_nccl_config({"commName": "tp_comm", "nchannels": 4}))  # CPU
        None
    """
    if nccl_config is not None and not isinstance(nccl_config, dict):
        raise TypeError(f"fw.distributed.create_nccl_config: nccl_config must be a dict or None, "
                        f"got {type(nccl_config).__name__}")
    from fw.distributed.communication._engine_nccl import nccl_available

    if nccl_config is None or not nccl_available():
        return None
    return NCCLConfig(**nccl_config)
