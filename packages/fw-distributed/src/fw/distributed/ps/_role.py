"""This process's parameter-server role, as fleet's role maker
(`fw.distributed.fleet.base.role_maker`, which parses Paddle's PS environment:
``TRAINING_ROLE``, ``PADDLE_PSERVERS_IP_PORT_LIST``, ``PADDLE_TRAINERS_NUM``,
``PADDLE_TRAINER_ID``, ``POD_IP``/``PADDLE_PORT``) answers it."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PSRole", "role_from_maker"]


@dataclass(frozen=True)
class PSRole:
    is_server: bool
    index: int                  # server index or trainer id
    server_endpoints: tuple     # "ip:port" per server
    num_trainers: int

    @property
    def num_servers(self) -> int:
        return len(self.server_endpoints)


def role_from_maker(role_maker, where: str = "fleet.init") -> PSRole:
    """The role a fleet role maker gives this process (Paddle's queries:
    ``_is_server``, ``_server_index``/``_worker_index``, ``_get_pserver_endpoints``,
    ``_worker_num``)."""
    if role_maker is None:
        raise RuntimeError(f"{where}: call fleet.init(role_maker=PaddleCloudRoleMaker()) in "
                           "parameter-server mode first")
    srv = bool(role_maker._is_server())
    eps = tuple(role_maker._get_pserver_endpoints())
    idx = int(role_maker._server_index() if srv else role_maker._worker_index())
    if not eps:
        raise ValueError(f"{where}: the role maker lists no parameter servers "
                         "(PADDLE_PSERVERS_IP_PORT_LIST)")
    return PSRole(srv, idx, eps, int(role_maker._worker_num()))
