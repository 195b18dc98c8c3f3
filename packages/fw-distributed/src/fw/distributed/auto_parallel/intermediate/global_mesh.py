"""The global mesh of the intermediate API (Paddle 3.x's ``set_mesh`` / ``get_mesh``):
`parallelize` and the plans read it when no mesh is passed explicitly."""

from __future__ import annotations

from fw.distributed.auto_parallel.process_mesh import ProcessMesh

__all__ = ["get_mesh", "set_mesh"]

_MESH: list = [None]


def set_mesh(mesh):
    """Set the global mesh that `parallelize` and the parallel plans use.

    Args:
        mesh (ProcessMesh): the global mesh (axes usually named "dp", "mp", "pp").

    Returns:
        None.

    Examples:
        .. code-block:: python

            >>> import fw.distributed as dist
            >>> dist.set_mesh(dist.ProcessMesh([0], dim_names=["dp"]))
            >>> dist.get_mesh().dim_names
            ['dp']
            >>> dist.set_mesh(None)
    """
    if mesh is not None and not isinstance(mesh, ProcessMesh):
        raise TypeError(f"set_mesh: mesh must be a fw.distributed.ProcessMesh, got "
                        f"{type(mesh).__name__}")
    _MESH[0] = mesh


def get_mesh():
    """The global mesh set by `set_mesh` (None before).

    Returns:
        ProcessMesh|None: the global mesh.

    Examples:
        .. code-block:: python

            >>> import fw.distributed as dist
            >>> dist.set_mesh(dist.ProcessMesh([0], dim_names=["mp"]))
            >>> dist.get_mesh().shape
            [1]
            >>> dist.set_mesh(None)
    """
    return _MESH[0]
