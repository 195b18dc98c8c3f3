"""Role makers (Paddle's ``paddle.distributed.fleet.base.role_maker``): who this
process is in a distributed job — a worker (trainer) or a parameter server, its
index, and everyone's endpoints.

`PaddleCloudRoleMaker` reads Paddle's environment variables (set by Paddle's and
fw's launchers); `UserDefinedRoleMaker` takes the same facts as arguments. Both
parse lazily, on the first query, as Paddle does, so a role maker can be made
before the environment is complete. The queries keep Paddle's underscore names
(``_is_server()``, ``_worker_num()``, ...): `fleet.Fleet`'s public methods
delegate to them, and the parameter-server runtime reads
them; that is the interface (see packages/fw-distributed/README.md).

Collectives of numbers (`_all_reduce`, `_all_gather`, `_barrier`, used by
`fleet.UtilBase`) run on fw.distributed's engine. In collective mode every
``comm_world`` is the job's world group; in parameter-server mode the runtime
tells the role maker which group each of "worker", "server" and "all" is
(`_set_comm_world`), since only it knows how servers and trainers share the job.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["Role", "RoleMakerBase", "PaddleCloudRoleMaker", "UserDefinedRoleMaker"]


class Role:
    """The roles of a process (Paddle's values).

    Examples:
        >>> import fw
        >>> from fw.distributed.fleet import Role
        >>> Role.WORKER, Role.SERVER
        (1, 2)
    """

    WORKER = 1
    SERVER = 2
    HETER_WORKER = 3
    ALL = 4
    COORDINATOR = 5


_ROLE_NAMES = {Role.WORKER: "WORKER", Role.SERVER: "SERVER", Role.HETER_WORKER: "HETER_WORKER",
               Role.ALL: "ALL", Role.COORDINATOR: "COORDINATOR"}
_COMM_WORLDS = ("worker", "server", "all")
_MODES = ("sum", "min", "max")


def _endpoints(value, what):
    """A comma-separated ``ip:port`` list, each entry checked."""
    eps = [e.strip() for e in value.split(",") if e.strip()]
    for e in eps:
        host, sep, port = e.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"{what}: {e!r} is not an 'ip:port' endpoint (in {value!r})")
    return eps


def _env_int(name, default=None):
    v = os.environ.get(name)
    if v is None or v == "":
        if default is None:
            raise ValueError(f"PaddleCloudRoleMaker: the environment variable {name} is not "
                             f"set (launch with fleetrun / python -m fw.distributed.launch, or "
                             f"export it)")
        return default
    try:
        return int(v)
    except ValueError:
        raise ValueError(f"PaddleCloudRoleMaker: {name}={v!r} is not an integer") from None


def _nodes(endpoints):
    return len({e.rsplit(":", 1)[0] for e in endpoints}) if endpoints else 1


class RoleMakerBase:
    """The base of role makers: the state every query reads, filled by
    ``_generate_role`` of a subclass.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> rm = fleet.PaddleCloudRoleMaker(is_collective=True)
        >>> isinstance(rm, fleet.RoleMakerBase)
        True
    """

    def __init__(self):
        self._worker_endpoints = []
        self._server_endpoints = []
        self._cur_endpoint = ""
        self._role_is_generated = False
        self._role = None
        self._current_id = -1
        self._trainers_num = 0
        self._nodes_num = 1
        self._non_distributed = False
        self._is_collective = False
        self._comm_worlds = {}

    def _generate_role(self):
        raise NotImplementedError(f"{type(self).__name__}: a role maker must implement "
                                  f"_generate_role()")

    def _gen(self):
        if not self._role_is_generated:
            self._generate_role()
            self._role_is_generated = True

    # -- queries (Paddle's names)
    def _is_worker(self) -> bool:
        self._gen()
        return self._role == Role.WORKER

    def _is_server(self) -> bool:
        self._gen()
        return self._role == Role.SERVER

    def _is_coordinator(self) -> bool:
        self._gen()
        return self._role == Role.COORDINATOR

    def _is_first_worker(self) -> bool:
        self._gen()
        return self._role == Role.WORKER and self._current_id == 0

    def _worker_index(self) -> int:
        self._gen()
        return self._current_id

    def _server_index(self) -> int:
        self._gen()
        return self._current_id

    def _role_id(self) -> int:
        self._gen()
        return self._current_id

    def _worker_num(self) -> int:
        self._gen()
        return self._trainers_num

    def _server_num(self) -> int:
        self._gen()
        return len(self._server_endpoints or [])

    def _node_num(self) -> int:
        self._gen()
        return self._nodes_num

    _get_node_num = _node_num

    def _get_trainer_endpoints(self) -> list:
        self._gen()
        return self._worker_endpoints

    def _get_pserver_endpoints(self) -> list:
        self._gen()
        return self._server_endpoints

    def _get_trainer_endpoint(self) -> str:
        self._gen()
        if self._role != Role.WORKER:
            raise RuntimeError(f"{type(self).__name__}._get_trainer_endpoint: this process "
                               f"is a {_ROLE_NAMES.get(self._role, self._role)}, not a trainer")
        return self._cur_endpoint

    def _is_non_distributed(self) -> bool:
        self._gen()
        return self._non_distributed

    def to_string(self) -> str:
        """A one-line description of this process's role, for logs.

        Returns:
            str: the role, the index and the endpoints.

        Examples:
            >>> import fw
            >>> from fw.distributed import fleet
            >>> rm = fleet.PaddleCloudRoleMaker(is_collective=True)
            >>> rm.to_string().startswith("role: ")
            True
        """
        self._gen()
        return (f"role: {self._role}, current_id: {self._current_id}, worker_endpoints: "
                f"{self._worker_endpoints}, server_endpoints: {self._server_endpoints}")

    # -- collectives of numbers over a "comm world"
    def _set_comm_world(self, name, group):
        """Tell the role maker which `fw.distributed.Group` is `name` ("worker",
        "server" or "all") for this process (the parameter-server runtime calls it;
        collective mode needs no call: every comm world is the job's world)."""
        if name not in _COMM_WORLDS:
            raise ValueError(f"{type(self).__name__}._set_comm_world: comm_world must be one "
                             f"of {_COMM_WORLDS}, got {name!r}")
        self._comm_worlds[name] = group

    def _group(self, comm_world, fn):
        if comm_world not in _COMM_WORLDS:
            raise ValueError(f"fleet.util.{fn}: comm_world must be one of {_COMM_WORLDS}, got "
                             f"{comm_world!r}")
        g = self._comm_worlds.get(comm_world)
        if g is not None:
            return g
        self._gen()
        if self._is_collective or self._non_distributed:
            from fw.distributed import _fleet_comm

            return _fleet_comm.world()
        raise RuntimeError(
            f"fleet.util.{fn}(comm_world={comm_world!r}): in parameter-server mode the "
            f"'{comm_world}' group is made by the parameter-server runtime "
            f"(fleet.init_worker()/init_server()); it is not set up yet")

    def _all_reduce(self, input, mode="sum", comm_world="worker"):
        """All-reduce a number or a 1-D sequence of numbers over `comm_world`;
        returns a NumPy array of `input`'s shape."""
        from fw.distributed import _fleet_comm

        if mode not in _MODES:
            raise ValueError(f"fleet.util.all_reduce: mode must be one of {_MODES}, got "
                             f"{mode!r}")
        g = self._group(comm_world, "all_reduce")
        a = _numbers(input, "all_reduce")
        _fleet_comm.all_reduce(a, op=mode, group=g)
        return a

    def _all_gather(self, input, comm_world="worker"):
        """Gather one number from every process of `comm_world`; returns a list in
        rank order."""
        from fw.distributed import _fleet_comm

        g = self._group(comm_world, "all_gather")
        a = _numbers(input, "all_gather")
        if a.ndim != 0:
            raise ValueError(f"fleet.util.all_gather: input must be one number, got shape "
                             f"{list(a.shape)}")
        return _fleet_comm.all_gather(a.reshape(1), group=g).reshape(-1).tolist()

    def _barrier(self, comm_world="worker"):
        from fw.distributed import _fleet_comm

        _fleet_comm.barrier(group=self._group(comm_world, "barrier"))


def _numbers(x, fn):
    if isinstance(x, tuple):
        x = list(x)
    a = np.array(x)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"fleet.util.{fn}: input must be numbers (an int, a float, a list or "
                        f"a NumPy array of them), got {type(x).__name__} of dtype {a.dtype}")
    if a.dtype.kind == "b":
        a = a.astype(np.int64)
    return np.array(a, order="C", copy=True)  # a 0-d input stays 0-d


class PaddleCloudRoleMaker(RoleMakerBase):
    """The role of this process from Paddle's environment variables.

    Parameter-server mode (``is_collective=False``) reads
    ``PADDLE_PSERVERS_IP_PORT_LIST`` (the servers' ``ip:port`` list; without it the
    job is a single non-distributed worker), ``PADDLE_TRAINERS_NUM``,
    ``TRAINING_ROLE`` (``TRAINER`` or ``PSERVER``), ``PADDLE_TRAINER_ID`` (a
    trainer's index), ``POD_IP`` and ``PADDLE_PORT`` (a server finds its index by its
    endpoint in the list) and ``PADDLE_TRAINER_ENDPOINTS`` (optional). Collective
    mode reads ``PADDLE_TRAINER_ID``, ``PADDLE_TRAINER_ENDPOINTS`` and
    ``PADDLE_CURRENT_ENDPOINT`` (what fw's launcher sets); without them it is rank 0
    of 1.

    Args:
        is_collective (bool): collective training (True) or parameter-server mode.
        **kwargs: accepted for Paddle compatibility (Gloo settings; fw's collectives
            run on its own engine).

    Examples:
        >>> import fw
        >>> import os
        >>> from fw.distributed import fleet
        >>> os.environ.update({"PADDLE_PSERVERS_IP_PORT_LIST": "127.0.0.1:36001,127.0.0.1:36002",
        ...                    "PADDLE_TRAINERS_NUM": "2", "TRAINING_ROLE": "PSERVER",
        ...                    "POD_IP": "127.0.0.1", "PADDLE_PORT": "36002"})
        >>> role = fleet.PaddleCloudRoleMaker(is_collective=False)
        >>> role._is_server(), role._server_index(), role._server_num(), role._worker_num()
        (True, 1, 2, 2)
        >>> for k in ("PADDLE_PSERVERS_IP_PORT_LIST", "PADDLE_TRAINERS_NUM", "TRAINING_ROLE",
        ...           "POD_IP", "PADDLE_PORT"):
        ...     del os.environ[k]
    """

    def __init__(self, is_collective=False, **kwargs):
        super().__init__()
        if not isinstance(is_collective, bool):
            raise TypeError(f"{type(self).__name__}: is_collective must be a bool, got "
                            f"{is_collective!r}")
        self._is_collective = is_collective
        self._kwargs = kwargs
        self._local_rank = None

    def _generate_role(self):
        if self._is_collective:
            self._collective_env()
        else:
            self._ps_env()

    def _ps_env(self):
        servers = os.environ.get("PADDLE_PSERVERS_IP_PORT_LIST")
        if servers is None:
            # no parameter servers: a plain single-process run (Paddle's fallback)
            self._server_endpoints = []
            self._trainers_num = 1
            self._role = Role.WORKER
            self._current_id = 0
            self._nodes_num = 1
            self._non_distributed = True
            return
        self._server_endpoints = _endpoints(servers, "PADDLE_PSERVERS_IP_PORT_LIST")
        workers = os.environ.get("PADDLE_TRAINER_ENDPOINTS")
        self._worker_endpoints = (_endpoints(workers, "PADDLE_TRAINER_ENDPOINTS")
                                  if workers else [])
        self._trainers_num = _env_int("PADDLE_TRAINERS_NUM")
        if self._trainers_num < 1:
            raise ValueError(f"PaddleCloudRoleMaker: PADDLE_TRAINERS_NUM must be >= 1, got "
                             f"{self._trainers_num}")
        role = os.environ.get("TRAINING_ROLE")
        if role is None:
            raise ValueError("PaddleCloudRoleMaker: the environment variable TRAINING_ROLE is "
                             "not set (TRAINER or PSERVER)")
        ip, port = os.environ.get("POD_IP"), os.environ.get("PADDLE_PORT")
        if role == "TRAINER":
            self._role = Role.WORKER
            self._current_id = _env_int("PADDLE_TRAINER_ID")
            if not 0 <= self._current_id < self._trainers_num:
                raise ValueError(f"PaddleCloudRoleMaker: PADDLE_TRAINER_ID={self._current_id} "
                                 f"is not in [0, PADDLE_TRAINERS_NUM={self._trainers_num})")
            if ip and port:
                self._cur_endpoint = f"{ip}:{port}"
            elif len(self._worker_endpoints) > self._current_id:
                self._cur_endpoint = self._worker_endpoints[self._current_id]
        elif role == "PSERVER":
            self._role = Role.SERVER
            if not ip or not port:
                missing = [n for n, v in (("POD_IP", ip), ("PADDLE_PORT", port)) if not v]
                raise ValueError(f"PaddleCloudRoleMaker: a PSERVER needs {' and '.join(missing)} "
                                 f"(its endpoint in PADDLE_PSERVERS_IP_PORT_LIST)")
            self._cur_endpoint = f"{ip}:{port}"
            if self._cur_endpoint not in self._server_endpoints:
                raise ValueError(f"PaddleCloudRoleMaker: this server's endpoint "
                                 f"POD_IP:PADDLE_PORT = {self._cur_endpoint} is not in "
                                 f"PADDLE_PSERVERS_IP_PORT_LIST={servers!r}")
            self._current_id = self._server_endpoints.index(self._cur_endpoint)
        elif role in ("HETER_TRAINER", "COORDINATOR"):
            raise NotImplementedError(f"PaddleCloudRoleMaker: TRAINING_ROLE={role} "
                                      f"(heterogeneous / federated parameter servers) is not "
                                      f"supported by fw; use TRAINER or PSERVER")
        else:
            raise ValueError(f"PaddleCloudRoleMaker: TRAINING_ROLE must be TRAINER or PSERVER, "
                             f"got {role!r}")
        self._nodes_num = _nodes(self._worker_endpoints)

    def _collective_env(self):
        self._role = Role.WORKER
        self._current_id = _env_int("PADDLE_TRAINER_ID", 0)
        eps = os.environ.get("PADDLE_TRAINER_ENDPOINTS")
        if not eps:
            self._worker_endpoints = ["127.0.0.1:6170"]
            self._cur_endpoint = self._worker_endpoints[0]
            self._non_distributed = True
        else:
            self._worker_endpoints = _endpoints(eps, "PADDLE_TRAINER_ENDPOINTS")
            self._cur_endpoint = os.environ.get("PADDLE_CURRENT_ENDPOINT",
                                                self._worker_endpoints[min(
                                                    self._current_id,
                                                    len(self._worker_endpoints) - 1)])
        self._trainers_num = len(self._worker_endpoints)
        if not 0 <= self._current_id < self._trainers_num:
            raise ValueError(f"PaddleCloudRoleMaker: PADDLE_TRAINER_ID={self._current_id} is "
                             f"not in [0, {self._trainers_num}) (the number of "
                             f"PADDLE_TRAINER_ENDPOINTS)")
        self._nodes_num = _nodes(self._worker_endpoints)
        self._local_rank = os.environ.get("PADDLE_RANK_IN_NODE")

    def _get_local_rank(self):
        self._gen()
        return self._local_rank


class UserDefinedRoleMaker(PaddleCloudRoleMaker):
    """A role maker from arguments instead of the environment.

    Args:
        is_collective (bool): collective training (True) or parameter-server mode.
        init_gloo (bool): accepted for Paddle compatibility.
        current_id (int): this process's index among its role.
        role (int): `Role.WORKER` or `Role.SERVER`.
        worker_num (int): the number of trainers (default: len(worker_endpoints)).
        worker_endpoints (list[str]): the trainers' ``ip:port``.
        server_endpoints (list[str]): the servers' ``ip:port``.

    Examples:
        >>> import fw
        >>> from fw.distributed import fleet
        >>> role = fleet.UserDefinedRoleMaker(
        ...     current_id=0, role=fleet.Role.SERVER, worker_num=2,
        ...     server_endpoints=["127.0.0.1:36011", "127.0.0.1:36012"])
        >>> role._is_server(), role._server_num(), role._get_pserver_endpoints()[0]
        (True, 2, '127.0.0.1:36011')
    """

    def __init__(self, is_collective=False, init_gloo=False, **kwargs):
        super().__init__(is_collective=is_collective, init_gloo=init_gloo, **kwargs)
        self._init_gloo = init_gloo

    def _generate_role(self):
        kw = self._kwargs
        name = type(self).__name__
        workers = list(kw.get("worker_endpoints") or [])
        for e in workers:
            _endpoints(e, f"{name}: worker_endpoints")
        cid = kw.get("current_id", 0)
        if not isinstance(cid, int) or cid < 0:
            raise ValueError(f"{name}: current_id must be an int >= 0, got {cid!r}")
        self._current_id = cid
        self._worker_endpoints = workers
        if self._is_collective:
            if not workers:
                raise ValueError(f"{name}(is_collective=True): worker_endpoints is required")
            self._role = Role.WORKER
            self._trainers_num = len(workers)
            self._cur_endpoint = workers[cid] if cid < len(workers) else ""
        else:
            servers = list(kw.get("server_endpoints") or [])
            for e in servers:
                _endpoints(e, f"{name}: server_endpoints")
            self._server_endpoints = servers
            self._trainers_num = int(kw.get("worker_num", 0) or len(workers))
            if self._trainers_num < 1:
                raise ValueError(f"{name}: give worker_num or worker_endpoints (the trainers)")
            role = kw.get("role")
            if role not in (Role.WORKER, Role.SERVER):
                raise ValueError(f"{name}: role must be Role.WORKER or Role.SERVER, got "
                                 f"{role!r}")
            self._role = role
            count = self._trainers_num if role == Role.WORKER else len(servers)
            if cid >= count:
                raise ValueError(f"{name}: current_id={cid} but there are only {count} "
                                 f"{'workers' if role == Role.WORKER else 'server_endpoints'}")
            if role == Role.WORKER and cid < len(workers):
                self._cur_endpoint = workers[cid]
            elif role == Role.SERVER:
                self._cur_endpoint = servers[cid]
        self._nodes_num = _nodes(self._worker_endpoints)
