"""This process's parameter-server role, from a fleet role maker or Paddle's
environment variables (what ``PaddleCloudRoleMaker`` reads in PS mode):

- ``TRAINING_ROLE``: ``PSERVER`` or ``TRAINER``
- ``PADDLE_PSERVERS_IP_PORT_LIST``: every server's ``ip:port``, comma-separated;
  a server's index is the position of its own ``POD_IP:PADDLE_PORT`` there
- ``PADDLE_TRAINERS_NUM``: the number of trainers; ``PADDLE_TRAINER_ID``: a
  trainer's index
"""
from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["PSRole", "role_from_env", "role_from_maker", "ps_mode_requested"]


@dataclass(frozen=True)
class PSRole:
    is_server: bool
    index: int                  # server index or trainer id
    server_endpoints: tuple     # "ip:port" per server
    num_trainers: int

    @property
    def num_servers(self) -> int:
        return len(self.server_endpoints)


def ps_mode_requested(environ=None) -> bool:
    environ = os.environ if environ is None else environ
    return environ.get("TRAINING_ROLE", "") in ("PSERVER", "TRAINER")


def _int(environ, name, where):
    v = environ.get(name)
    if v in (None, ""):
        raise ValueError(f"{where}: parameter-server mode needs {name} in the environment")
    try:
        return int(v)
    except ValueError:
        raise ValueError(f"{where}: {name} must be an integer, got {v!r}") from None


def role_from_env(environ=None, where: str = "fleet.init") -> PSRole:
    """The role the environment describes; ValueError naming the variable otherwise."""
    environ = os.environ if environ is None else environ
    role = environ.get("TRAINING_ROLE", "")
    if role not in ("PSERVER", "TRAINER"):
        raise ValueError(f"{where}: TRAINING_ROLE must be PSERVER or TRAINER in "
                         f"parameter-server mode, got {role!r}")
    eps = tuple(e.strip() for e in environ.get("PADDLE_PSERVERS_IP_PORT_LIST", "").split(",")
                if e.strip())
    if not eps:
        raise ValueError(f"{where}: PADDLE_PSERVERS_IP_PORT_LIST (the servers' ip:port list) "
                         "is empty")
    if len(set(eps)) != len(eps):
        raise ValueError(f"{where}: PADDLE_PSERVERS_IP_PORT_LIST names a server twice: "
                         f"{','.join(eps)}")
    trainers = _int(environ, "PADDLE_TRAINERS_NUM", where)
    if trainers < 1:
        raise ValueError(f"{where}: PADDLE_TRAINERS_NUM must be >= 1, got {trainers}")
    if role == "PSERVER":
        ip = environ.get("POD_IP", "")
        port = environ.get("PADDLE_PORT", "")
        me = f"{ip}:{port}"
        if me not in eps:
            raise ValueError(f"{where}: this server's POD_IP:PADDLE_PORT = {me!r} is not in "
                             f"PADDLE_PSERVERS_IP_PORT_LIST = {','.join(eps)}")
        return PSRole(True, eps.index(me), eps, trainers)
    tid = _int(environ, "PADDLE_TRAINER_ID", where)
    if not 0 <= tid < trainers:
        raise ValueError(f"{where}: PADDLE_TRAINER_ID={tid} is outside [0, "
                         f"PADDLE_TRAINERS_NUM={trainers})")
    return PSRole(False, tid, eps, trainers)


def _query(maker, name):
    # Paddle's role makers answer with underscored methods (``_is_server``); accept
    # the plain spelling too
    for n in ("_" + name, name):
        f = getattr(maker, n, None)
        if callable(f):
            return f
    return None


def role_from_maker(role_maker, where: str = "fleet.init") -> PSRole:
    """The role of a fleet role maker that answers Paddle's queries
    (``is_server``, ``server_index``/``worker_index``, ``get_pserver_endpoints``,
    ``worker_num``, with or without the leading underscore), else of the
    environment."""
    names = ("is_server", "server_index", "worker_index", "get_pserver_endpoints",
             "worker_num")
    q = {n: _query(role_maker, n) for n in names} if role_maker is not None else {}
    if role_maker is None or not all(q.values()):
        return role_from_env(where=where)
    srv = bool(q["is_server"]())
    eps = tuple(q["get_pserver_endpoints"]())
    idx = int(q["server_index"]() if srv else q["worker_index"]())
    return PSRole(srv, idx, eps, int(q["worker_num"]()))
