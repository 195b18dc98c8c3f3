"""Process groups: `Group`, `new_group`, `get_group`, `destroy_process_group`.

A group is an MPI communicator over a subset of the world's ranks (created with
MPI_Comm_create_group, so only the members take part), with its own default
timeout and its own sequence counter (the desync check compares it). Every rank
of the world calls `new_group` in the same order, as in Paddle, so group ids agree
across ranks; a non-member gets a Group with ``rank == -1`` on which collectives
do nothing.
"""
from __future__ import annotations

from fw.distributed.communication._world import state, timeout_seconds

__all__ = ["Group", "new_group", "get_group", "destroy_process_group", "default_group"]

_groups: dict = {}        # id -> Group (the world group is id 0)
_next_id = [1]


class Group:
    """A communication group (Paddle's ``paddle.distributed.collective.Group``).

    Attributes: ``id``, ``ranks`` (global ranks of the members, in group-rank
    order), ``rank`` (this process's rank in the group, -1 if not a member),
    ``nranks`` (= ``world_size``), ``name``, ``backend`` ("MPI" on CPUs, "NCCL" for
    GPU tensors), ``timeout`` (seconds).

    Args:
        gid (int): the group id (0: the world).
        ranks (list[int]): the global ranks of the members, in group-rank order.
        engine: the CPU transport engine (None off-group).
        timeout (float): seconds before a collective is declared hung.
        name (str, optional): the group name. Default: None.

    Examples:
        >>> import fw.distributed as dist
        >>> g = dist.new_group([0])
        >>> g.nranks, g.get_group_rank(0)
        (1, 0)
    """

    def __init__(self, gid, ranks, engine, timeout, name=None):
        self.id = gid
        self.ranks = list(ranks)
        self.nranks = len(self.ranks)
        self._global_rank = state.rank
        self.rank = self.ranks.index(state.rank) if state.rank in self.ranks else -1
        self.engine = engine            # CPU engine (MpiEngine / SelfEngine), None off-group
        self.nccl = None                # the GPU engine, created on the first GPU tensor
        self.timeout = timeout
        self.name = name or ("_default_pg" if gid == 0 else f"_pg_{gid}")
        self._seq = 0                   # collectives issued on this group
        self._p2p_seq = {}              # peer -> ops exchanged with it
        self._last = None               # the latest collective's flight-recorder entry
        self._last_p2p = None           # the latest send/recv's

    @property
    def world_size(self) -> int:
        """The number of ranks in the group (= ``nranks``).

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.new_group([0]).world_size
            1
        """
        return self.nranks

    @property
    def backend(self) -> str:
        """The name of the group's transport engine (``"MPI"`` between processes,
        ``"SELF"`` for a one-rank group, ``"NCCL"`` once a GPU tensor was communicated).

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.new_group([0]).backend
            'SELF'
        """
        return self.engine.name if self.engine is not None else "MPI"

    @property
    def process_group(self):
        """The group itself (Paddle's ``group.process_group`` handle, used by the
        stream API).

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> g = dist.new_group([0])
            >>> g.process_group is g
            True
        """
        return self

    def is_member(self) -> bool:
        """Whether this process belongs to the group.

        Returns:
            bool: True when this rank is one of ``ranks``.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.new_group([0]).is_member()
            True
        """
        return self.rank >= 0

    def get_group_rank(self, rank: int) -> int:
        """The group rank of global `rank`.

        Args:
            rank (int): a global rank.

        Returns:
            int: its position in ``ranks``, or -1 if it is not a member.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> g = dist.new_group([0])
            >>> g.get_group_rank(0), g.get_group_rank(5)
            (0, -1)
        """
        return self.ranks.index(rank) if rank in self.ranks else -1

    def get_global_rank(self, group_rank: int) -> int:
        """The global rank of the member at `group_rank`.

        Args:
            group_rank (int): a rank inside the group, ``0 <= group_rank < nranks``.

        Returns:
            int: the member's global rank; a ValueError when `group_rank` is out of range.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> dist.new_group([0]).get_global_rank(0)
            0
        """
        if not 0 <= group_rank < self.nranks:
            raise ValueError(f"fw.distributed.Group.get_global_rank: group rank {group_rank} "
                             f"is out of range for group {self.id} of {self.nranks} ranks")
        return self.ranks[group_rank]

    def __repr__(self):
        return (f"Group(id={self.id}, rank={self.rank}, nranks={self.nranks}, "
                f"ranks={self.ranks}, backend={self.backend})")


def _require_init(fn):
    if not state.initialized:
        # Paddle requires init_parallel_env first; a single process without a
        # launcher has nothing to wait for, so it is set up implicitly (rank 0 of 1).
        from fw.distributed.communication._world import env_world_size
        from fw.distributed.parallel_env import init_parallel_env

        if env_world_size() > 1:
            raise RuntimeError(f"fw.distributed.{fn}: call fw.distributed.init_parallel_env() "
                               "first (this process was launched as one rank of a "
                               f"{env_world_size()}-rank job)")
        init_parallel_env()


def default_group(fn="collective"):
    _require_init(fn)
    return state.world


def new_group(ranks=None, backend=None, timeout=None, nccl_comm_init_option=0):
    """Create a communication group of the global `ranks`.

    Every rank of the world must call it, in the same order, even ranks not in `ranks`
    (they get a group whose ``rank`` is -1).

    Args:
        ranks (list[int], optional): distinct global ranks, in group-rank order. Default:
            None (all ranks).
        backend (str, optional): None, "mpi", "gloo" (both the CPU engine, MPI) or "nccl"
            (GPU tensors use NCCL anyway; kept for Paddle compatibility). Default: None.
        timeout (float|datetime.timedelta, optional): default timeout, in seconds, of the
            group's collectives. Default: None (the world's).
        nccl_comm_init_option (int, optional): accepted for Paddle compatibility; unused.
            Default: 0.

    Returns:
        Group: the new group.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> g = dist.new_group([0], timeout=60)
        >>> g.nranks, g.rank, g.timeout
        (1, 0, 60.0)
    """
    _require_init("new_group")
    if backend not in (None, "mpi", "MPI", "gloo", "nccl", "bkcl", "auto"):
        raise ValueError(f"fw.distributed.new_group: backend must be None, 'mpi', 'gloo' or "
                         f"'nccl', got {backend!r}")
    world = state.world
    if ranks is None:
        ranks = list(range(state.world_size))
    ranks = [int(r) for r in ranks]
    bad = [r for r in ranks if not 0 <= r < state.world_size]
    if bad or len(set(ranks)) != len(ranks) or not ranks:
        raise ValueError(f"fw.distributed.new_group: ranks must be distinct ranks in "
                         f"[0, {state.world_size}), got {ranks}")
    t = timeout_seconds(timeout, "new_group")
    gid = _next_id[0]
    _next_id[0] += 1
    engine = None
    if state.rank in ranks:
        from fw.distributed.communication.task import check_usable

        check_usable("new_group")
        if state.store is not None and len(ranks) > 1:
            # all members must arrive before the (blocking) communicator creation
            from fw.distributed.store import store_barrier

            store_barrier(state.store, state.key("comm", "new_group", gid), ranks.index(state.rank),
                          len(ranks), t)
        engine = world.engine.split(ranks)
    g = Group(gid, ranks, engine, t)
    _groups[gid] = g
    return g


def get_group(id=0):
    """Look up a group by its id.

    Args:
        id (int, optional): the group's id; 0 is the world group. Default: 0.

    Returns:
        Group: the group. A ValueError lists the existing ids when there is none.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> g = dist.new_group([0])
        >>> dist.get_group(g.id) is g
        True
    """
    _require_init("get_group")
    g = _groups.get(id)
    if g is None:
        raise ValueError(f"fw.distributed.get_group: no group with id {id!r} "
                         f"(existing: {sorted(_groups)})")
    return g


def destroy_process_group(group=None):
    """Free a group's communicator, or the whole distributed state.

    With None every group and the world state are freed, after which
    `is_initialized()` is False and `init_parallel_env` may run again in the same
    process (MPI itself stays initialised until exit).

    Args:
        group (Group, optional): the group to free; None for everything. Default: None.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import fw.distributed as dist
        >>> _ = dist.init_parallel_env()
        >>> dist.destroy_process_group()
        >>> dist.is_initialized()
        False
    """
    if group is None:
        from fw.distributed.communication.task import _pending

        _pending.clear()
        for g in list(_groups.values()):
            _free(g)
        _groups.clear()
        _next_id[0] = 1
        if state.publisher is not None:
            state.publisher.stop.set()
        if state.store is not None:
            try:
                state.store.close()
            except Exception:  # noqa: BLE001
                pass
        state.reset()
        from fw.core.internal import collectives
        from fw.distributed.communication import _lowering

        collectives.unregister_backend(_lowering.run)
        return
    if group.id == 0:
        raise ValueError("fw.distributed.destroy_process_group: the world group is destroyed "
                         "with destroy_process_group() (group=None)")
    _free(group)
    _groups.pop(group.id, None)


def _free(g):
    if g.engine is not None:
        g.engine.free()
    if g.nccl is not None:
        g.nccl.free()
        g.nccl = None
    g.engine = None
    g.rank = -1
