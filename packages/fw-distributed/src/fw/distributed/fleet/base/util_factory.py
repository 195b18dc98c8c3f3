"""`fleet.UtilBase` (Paddle's ``paddle.distributed.fleet.base.util_factory``):
small distributed utilities over the role maker fleet was initialised with —
collectives of numbers between the workers, the servers or all processes, and
splitting a file list among the trainers."""

from __future__ import annotations

__all__ = ["UtilBase"]


class UtilBase:
    """Distributed utilities (``fleet.util`` is the instance `fleet.init` sets up).

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> util = fleet.UtilBase()
        >>> util._set_role_maker(fleet.UserDefinedRoleMaker(
        ...     current_id=1, role=fleet.Role.WORKER, worker_num=2,
        ...     server_endpoints=["127.0.0.1:6001"]))
        >>> util.get_file_shard(["a", "b", "c", "d", "e"])
        ['d', 'e']
    """

    def __init__(self):
        self.role_maker = None
        self.dist_strategy = None

    def _set_strategy(self, dist_strategy):
        self.dist_strategy = dist_strategy

    def _set_role_maker(self, role_maker):
        self.role_maker = role_maker

    def _rm(self, fn):
        if self.role_maker is None:
            # Paddle's fleet.util before fleet.init: the environment's role maker
            from fw.distributed.fleet.base.role_maker import PaddleCloudRoleMaker

            self.role_maker = PaddleCloudRoleMaker(is_collective=True)
        return self.role_maker

    def all_reduce(self, input, mode="sum", comm_world="worker"):
        """All-reduce `input` among the processes of `comm_world`.

        Args:
            input (int|float|list|tuple|numpy.ndarray): numbers (one value or 1-D).
            mode (str): "sum", "min" or "max".
            comm_world (str): "worker", "server" or "all".

        Returns:
            numpy.ndarray: the reduction, shaped like `input`.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.util.all_reduce([1, 2], "sum").tolist()   # one process
            [1, 2]
        """
        return self._rm("all_reduce")._all_reduce(input, mode, comm_world)

    def barrier(self, comm_world="worker"):
        """Wait until every process of `comm_world` ("worker", "server", "all") arrives.

        Args:
            comm_world (str, optional): "worker", "server" or "all". Default: "worker".

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.util.barrier()
        """
        self._rm("barrier")._barrier(comm_world)

    def all_gather(self, input, comm_world="worker"):
        """Gather one number from every process of `comm_world`.

        Args:
            input (int|float): this process's value.
            comm_world (str): "worker", "server" or "all".

        Returns:
            list: the values in rank order.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.util.all_gather(3)
            [3]
        """
        return self._rm("all_gather")._all_gather(input, comm_world)

    def get_file_shard(self, files):
        """This trainer's part of `files`: contiguous blocks, the first
        ``len(files) % trainers`` trainers getting one file more (Paddle's split:
        5 files on 2 trainers give [a, b, c] and [d, e]; 2 files on 3 trainers give
        [a], [b], []).

        Args:
            files (list): the file names.

        Returns:
            list: the files of this trainer.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> util = fleet.UtilBase()
            >>> util._set_role_maker(fleet.UserDefinedRoleMaker(
            ...     is_collective=True, current_id=0, worker_endpoints=["127.0.0.1:1"]))
            >>> util.get_file_shard(["x", "y"])
            ['x', 'y']
        """
        if not isinstance(files, list):
            raise TypeError(f"UtilBase.get_file_shard: files must be a list of file names, got "
                            f"{type(files).__name__}")
        rm = self._rm("get_file_shard")
        trainers, tid = rm._worker_num(), rm._worker_index()
        base, extra = divmod(len(files), trainers)
        start = tid * base + min(tid, extra)
        return files[start:start + base + (1 if tid < extra else 0)]

    def print_on_rank(self, message, rank_id):
        """Print `message` on the worker whose index is `rank_id` only.

        Args:
            message (str): the text.
            rank_id (int): the worker index that prints.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> fleet.util.print_on_rank("hello", 0)
            hello
        """
        if self._rm("print_on_rank")._worker_index() == rank_id:
            print(message, flush=True)
