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
    """What `HybridCommunicateGroup.get_parallel_mode` returns (Paddle's values)."""

    DATA_PARALLEL = 0
    TENSOR_PARALLEL = 1
    PIPELINE_PARALLEL = 2
    SHARDING_PARALLEL = 3
    SEGMENT_PARALLEL = 4


class CommunicateTopology:
    """`names` (axis names) and `dims` (their sizes); rank = row-major index."""

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
        return list(self._names)

    def get_dim(self, name):
        return self._dims[self._names.index(name)]

    def world_size(self):
        return len(self._coords)

    def get_coord(self, rank):
        return self._coords[rank]

    def get_rank(self, **coord):
        return self._rank_of[tuple(coord[n] for n in self._names)]

    def get_axis_list(self, axis_name, index):
        """The ranks whose coordinate on `axis_name` is `index`."""
        a = self._names.index(axis_name)
        return [r for r, c in enumerate(self._coords) if c[a] == index]

    def get_comm_list(self, axis_name):
        """Every group along `axis_name`: lists of ranks differing only there."""
        a = self._names.index(axis_name)
        groups = {}
        for r, c in enumerate(self._coords):
            key = c[:a] + c[a + 1:]
            groups.setdefault(key, []).append(r)
        return [groups[k] for k in sorted(groups)]


_AXES = {"dp": "data", "pp": "pipe", "sharding": "sharding", "sep": "sep", "mp": "model"}


class HybridCommunicateGroup:
    """This rank's groups on each axis of `topology` (made with the world's ranks;
    collective: every rank constructs it in the same order)."""

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
        return self._topo

    def _g(self, axis):
        return self._groups[_AXES[axis]]

    def get_parallel_mode(self):
        if self._g("pp").nranks > 1:
            return ParallelMode.PIPELINE_PARALLEL
        if self._g("mp").nranks > 1:
            return ParallelMode.TENSOR_PARALLEL
        if self._g("sharding").nranks > 1:
            return ParallelMode.SHARDING_PARALLEL
        return ParallelMode.DATA_PARALLEL

    def get_global_rank(self):
        return self.global_rank

    # data parallel
    def get_data_parallel_rank(self):
        return self._g("dp").rank

    def get_data_parallel_world_size(self):
        return self._g("dp").nranks

    def get_data_parallel_group(self):
        return self._g("dp")

    def get_data_parallel_group_src_rank(self):
        return self._g("dp").ranks[0]

    # tensor (model) parallel
    def get_model_parallel_rank(self):
        return self._g("mp").rank

    def get_model_parallel_world_size(self):
        return self._g("mp").nranks

    def get_model_parallel_group(self):
        return self._g("mp")

    def get_model_parallel_group_src_rank(self):
        return self._g("mp").ranks[0]

    # pipeline parallel
    def get_stage_id(self):
        return self._g("pp").rank

    def get_pipe_parallel_world_size(self):
        return self._g("pp").nranks

    def get_pipe_parallel_group(self):
        return self._g("pp")

    # sharding
    def get_sharding_parallel_rank(self):
        return self._g("sharding").rank

    def get_sharding_parallel_world_size(self):
        return self._g("sharding").nranks

    def get_sharding_parallel_group(self):
        return self._g("sharding")

    def get_sharding_parallel_group_src_rank(self):
        return self._g("sharding").ranks[0]

    def get_check_parallel_group(self, sharding=False):
        return comm.world()

    def __repr__(self):
        return (f"HybridCommunicateGroup(rank={self.global_rank}, "
                + ", ".join(f"{k}={self._groups[v].nranks}" for k, v in _AXES.items()) + ")")
