"""The hybrid-parallel topology: world ranks laid out on a grid of parallel axes.

Paddle's layout (``CommunicateTopology``): the axes in ``hybrid_configs["order"]``
(default ``dp, pp, sharding, sep, mp``), the last varying fastest, so the ranks of
one tensor-parallel group are neighbours (they talk most). A rank's coordinate
on each axis is its rank in that axis's group; the group of an axis is the ranks
that differ from this one on that axis only.
"""

from __future__ import annotations

import itertools

from fw.distributed import _fleet_comm as comm

__all__ = ["CommunicateTopology", "HybridCommunicateGroup", "ParallelMode"]


class ParallelMode:
    """What `HybridCommunicateGroup.get_parallel_mode` returns (Paddle's values).

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> fleet.ParallelMode.DATA_PARALLEL, fleet.ParallelMode.PIPELINE_PARALLEL
        (0, 2)
    """

    DATA_PARALLEL = 0
    TENSOR_PARALLEL = 1
    PIPELINE_PARALLEL = 2
    SHARDING_PARALLEL = 3
    SEGMENT_PARALLEL = 4


class CommunicateTopology:
    """The hybrid-parallel layout: axis names and their sizes; a rank is the row-major
    index of its coordinate.

    Args:
        hybrid_group_names (list[str], optional): the axes, outermost first.
            Default: ``("data", "pipe", "sharding", "sep", "model")``.
        dims (list[int], optional): their sizes. Default: all 1.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> topo = fleet.CommunicateTopology(["data", "model"], [2, 2])
        >>> topo.world_size(), topo.get_comm_list("model")
        (4, [[0, 1], [2, 3]])
    """

    def __init__(self, hybrid_group_names=("data", "pipe", "sharding", "sep", "model"),
                 dims=(1, 1, 1, 1, 1)):
        self._names = list(hybrid_group_names)
        self._dims = [int(d) for d in dims]
        if len(self._names) != len(self._dims):
            raise ValueError(f"CommunicateTopology: {len(self._names)} names but "
                             f"{len(self._dims)} dims")
        self._coords = list(itertools.product(*[range(d) for d in self._dims]))
        self._rank_of = {c: r for r, c in enumerate(self._coords)}

    def get_hybrid_group_names(self):
        """The axis names, outermost first.

        Returns:
            list[str]: the names.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> topo = fleet.CommunicateTopology(["data", "pipe", "model"], [2, 1, 2])
            >>> topo.get_hybrid_group_names()
            ['data', 'pipe', 'model']
        """
        return list(self._names)

    def get_dim(self, name):
        """The size of axis `name`.

        Args:
            name (str): an axis name.

        Returns:
            int: its size.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> topo = fleet.CommunicateTopology(["data", "pipe", "model"], [2, 1, 2])
            >>> topo.get_dim("model")
            2
        """
        return self._dims[self._names.index(name)]

    def world_size(self):
        """The number of ranks (the product of the sizes).

        Returns:
            int: the ranks.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> topo = fleet.CommunicateTopology(["data", "pipe", "model"], [2, 1, 2])
            >>> topo.world_size()
            4
        """
        return len(self._coords)

    def get_coord(self, rank):
        """`rank`'s coordinate (row-major order over the axes).

        Args:
            rank (int): a global rank.

        Returns:
            tuple: one index per axis.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> topo = fleet.CommunicateTopology(["data", "pipe", "model"], [2, 1, 2])
            >>> topo.get_coord(3)
            (1, 0, 1)
        """
        return self._coords[rank]

    def get_rank(self, **coord):
        """The rank at a coordinate given by axis name.

        Args:
            **coord (int): the index on every axis, by name.

        Returns:
            int: the rank.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> topo = fleet.CommunicateTopology(["data", "pipe", "model"], [2, 1, 2])
            >>> topo.get_rank(data=1, pipe=0, model=0)
            2
        """
        return self._rank_of[tuple(coord[n] for n in self._names)]

    def get_axis_list(self, axis_name, index):
        """The ranks whose coordinate on `axis_name` is `index`.

        Args:
            axis_name (str): the axis.
            index (int): the coordinate on it.

        Returns:
            list[int]: the ranks.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> topo = fleet.CommunicateTopology(["data", "pipe", "model"], [2, 1, 2])
            >>> topo.get_axis_list("data", 1)
            [2, 3]
        """
        a = self._names.index(axis_name)
        return [r for r, c in enumerate(self._coords) if c[a] == index]

    def get_comm_list(self, axis_name):
        """Every group along `axis_name`: lists of ranks differing only there.

        Args:
            axis_name (str): the axis.

        Returns:
            list[list[int]]: the groups.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> topo = fleet.CommunicateTopology(["data", "pipe", "model"], [2, 1, 2])
            >>> topo.get_comm_list("model")
            [[0, 1], [2, 3]]
        """
        a = self._names.index(axis_name)
        groups = {}
        for r, c in enumerate(self._coords):
            key = c[:a] + c[a + 1:]
            groups.setdefault(key, []).append(r)
        return [groups[k] for k in sorted(groups)]


_AXES = {"dp": "data", "pp": "pipe", "sharding": "sharding", "sep": "sep", "mp": "model"}


class HybridCommunicateGroup:
    """This rank's groups on each axis of `topology` (made with the world's ranks;
    collective: every rank constructs it in the same order). ``fleet.init`` makes
    one from ``strategy.hybrid_configs``.

    Args:
        topology (CommunicateTopology): the layout; its size must be the job's.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> hcg = fleet.HybridCommunicateGroup(fleet.CommunicateTopology())
        >>> hcg.get_data_parallel_world_size(), hcg.get_stage_id()
        (1, 0)
    """

    def __init__(self, topology):
        self._topo = topology
        w = comm.world()
        if topology.world_size() != w.nranks:
            dims = dict(zip(topology.get_hybrid_group_names(), topology._dims))
            raise ValueError(
                f"fleet: the hybrid degrees {dims} multiply to {topology.world_size()} ranks "
                f"but the job has {w.nranks}")
        self.global_rank = w.rank
        self.nranks = w.nranks
        self._groups = {}
        coord = topology.get_coord(w.rank)
        for name in topology.get_hybrid_group_names():
            mine = None
            for ranks in topology.get_comm_list(name):
                g = comm.new_group(ranks, name=name)
                if w.rank in ranks:
                    mine = g
            self._groups[name] = mine
        self._coord = dict(zip(topology.get_hybrid_group_names(), coord))

    def topology(self):
        """The `CommunicateTopology` the groups were made from.

        Returns:
            CommunicateTopology: the topology.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.topology().world_size()
            1
        """
        return self._topo

    def _g(self, axis):
        return self._groups[_AXES[axis]]

    def get_parallel_mode(self):
        """The dominant parallel mode: pipeline, else tensor, else sharding parallel
        when that axis has more than one rank; data parallel otherwise.

        Returns:
            int: a `ParallelMode` value.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_parallel_mode() == fleet.ParallelMode.DATA_PARALLEL
            True
        """
        if self._g("pp").nranks > 1:
            return ParallelMode.PIPELINE_PARALLEL
        if self._g("mp").nranks > 1:
            return ParallelMode.TENSOR_PARALLEL
        if self._g("sharding").nranks > 1:
            return ParallelMode.SHARDING_PARALLEL
        return ParallelMode.DATA_PARALLEL

    def get_global_rank(self):
        """This process's global rank.

        Returns:
            int: the rank.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_global_rank()
            0
        """
        return self.global_rank

    # data parallel
    def get_data_parallel_rank(self):
        """This rank's index in its data-parallel group.

        Returns:
            int: the index.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_data_parallel_rank()
            0
        """
        return self._g("dp").rank

    def get_data_parallel_world_size(self):
        """The data-parallel degree.

        Returns:
            int: the group's size.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_data_parallel_world_size()
            1
        """
        return self._g("dp").nranks

    def get_data_parallel_group(self):
        """This rank's data-parallel group (for `DataParallel` and gradient all-reduce).

        Returns:
            Group: the group.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_data_parallel_group().nranks
            1
        """
        return self._g("dp")

    def get_data_parallel_group_src_rank(self):
        """The global rank of the first member of the data-parallel group (the source of
        parameter broadcasts).

        Returns:
            int: the rank.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_data_parallel_group_src_rank()
            0
        """
        return self._g("dp").ranks[0]

    # tensor (model) parallel
    def get_model_parallel_rank(self):
        """This rank's index in its tensor-parallel group.

        Returns:
            int: the index.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_model_parallel_rank()
            0
        """
        return self._g("mp").rank

    def get_model_parallel_world_size(self):
        """The tensor-parallel degree.

        Returns:
            int: the group's size.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_model_parallel_world_size()
            1
        """
        return self._g("mp").nranks

    def get_model_parallel_group(self):
        """This rank's tensor-parallel group (used by the meta_parallel layers).

        Returns:
            Group: the group.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_model_parallel_group().nranks
            1
        """
        return self._g("mp")

    def get_model_parallel_group_src_rank(self):
        """The global rank of the first member of the tensor-parallel group.

        Returns:
            int: the rank.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_model_parallel_group_src_rank()
            0
        """
        return self._g("mp").ranks[0]

    # pipeline parallel
    def get_stage_id(self):
        """This rank's pipeline stage.

        Returns:
            int: the stage, from 0.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_stage_id()
            0
        """
        return self._g("pp").rank

    def get_pipe_parallel_world_size(self):
        """The pipeline-parallel degree (number of stages).

        Returns:
            int: the group's size.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_pipe_parallel_world_size()
            1
        """
        return self._g("pp").nranks

    def get_pipe_parallel_group(self):
        """This rank's pipeline group (the stages exchanging activations).

        Returns:
            Group: the group.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_pipe_parallel_group().nranks
            1
        """
        return self._g("pp")

    # sharding
    def get_sharding_parallel_rank(self):
        """This rank's index in its sharding group.

        Returns:
            int: the index.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_sharding_parallel_rank()
            0
        """
        return self._g("sharding").rank

    def get_sharding_parallel_world_size(self):
        """The sharding degree.

        Returns:
            int: the group's size.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_sharding_parallel_world_size()
            1
        """
        return self._g("sharding").nranks

    def get_sharding_parallel_group(self):
        """This rank's sharding (ZeRO) group.

        Returns:
            Group: the group.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_sharding_parallel_group().nranks
            1
        """
        return self._g("sharding")

    def get_sharding_parallel_group_src_rank(self):
        """The global rank of the first member of the sharding group.

        Returns:
            int: the rank.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_sharding_parallel_group_src_rank()
            0
        """
        return self._g("sharding").ranks[0]

    def get_check_parallel_group(self, sharding=False):
        """The group over which global checks (e.g. non-finite gradients) are reduced: the
        world.

        Args:
            sharding (bool, optional): accepted for Paddle's API. Default: False.

        Returns:
            Group: the world group.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.init(is_collective=True)
            >>> hcg = fleet.get_hybrid_communicate_group()
            >>> hcg.get_check_parallel_group().nranks
            1
        """
        return comm.world()

    def __repr__(self):
        return (f"HybridCommunicateGroup(rank={self.global_rank}, "
                + ", ".join(f"{k}={self._groups[v].nranks}" for k, v in _AXES.items()) + ")")
