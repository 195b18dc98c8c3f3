"""Paddle 3.x's ``SplitPoint`` and the ``pp_config`` of `parallelize`."""

from __future__ import annotations

import enum
import re

__all__ = ["SplitPoint", "check_pp_config"]


class SplitPoint(enum.Enum):
    """Where `parallelize`'s ``pp_config["split_spec"]`` cuts the model into pipeline
    stages: ``BEGINNING`` before the named layer, ``END`` after it.

    Examples:
        .. code-block:: python

            >>> import fw.distributed as dist
            >>> dist.SplitPoint.END.value, dist.SplitPoint.BEGINNING.value
            (1, 0)
    """

    BEGINNING = 0
    END = 1


def check_pp_config(model, mesh, pp_config):
    """Validate `pp_config` against the model and the mesh; returns normally only
    when the "pp" axis has one stage (nothing to split). Eager pipeline stages
    would live on sub-meshes of the global mesh, which fw's eager distributed
    tensors do not support (every mesh holds every rank)."""
    who = "parallelize(pp_config)"
    if not isinstance(pp_config, dict) or "split_spec" not in pp_config:
        raise ValueError(f"{who}: expected a dict with 'split_spec' (a layer-name prefix or "
                         f"{{layer name: SplitPoint}}), got {pp_config!r}")
    if "pp" not in mesh.dim_names:
        raise ValueError(f"{who}: the mesh {mesh.dim_names} has no 'pp' axis")
    names = [n for n, _ in model.named_sublayers()]
    spec = pp_config["split_spec"]
    if isinstance(spec, str):
        if not any(n.startswith(spec + ".") for n in names):
            raise ValueError(f"{who}: no sublayer of the model starts with {spec!r}")
    elif isinstance(spec, dict):
        for k, v in spec.items():
            if not isinstance(v, SplitPoint):
                raise TypeError(f"{who}: split_spec[{k!r}] must be a SplitPoint, got {v!r}")
            if not any(re.fullmatch(k, n) for n in names):
                raise ValueError(f"{who}: split_spec names {k!r}, which matches no sublayer")
    else:
        raise TypeError(f"{who}: split_spec must be a str or a dict, got "
                        f"{type(spec).__name__}")
    if mesh.get_dim_size("pp") > 1:
        raise NotImplementedError(
            f"{who}: eager pipeline parallelism places each stage on a sub-mesh of the 'pp' "
            f"axis, and fw's eager distributed tensors require every rank in the mesh; use "
            f"dist.to_static with strategy.pipeline (it splits the traced program into stages) "
            f"or fleet's PipelineLayer")
