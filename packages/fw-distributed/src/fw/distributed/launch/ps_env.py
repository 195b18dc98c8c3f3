"""The launcher's parameter-server branch (``--run_mode ps``): which rank is a
server and which a trainer, and the role variables Paddle's
``PaddleCloudRoleMaker`` reads in PS mode.

Ranks ``0 .. S-1`` are the servers, ``S .. S+T-1`` the trainers, all in one MPI
world (the launcher's PMI), so the servers and trainers talk over MPI
point-to-point (fw.distributed.ps). Each server's endpoint is its rank's
``host:port`` from the launcher's endpoint list.
"""
from __future__ import annotations

__all__ = ["ps_rank_environ"]


def ps_rank_environ(env: dict, rank: int, num_servers: int, num_trainers: int,
                    endpoints: list[str]) -> dict:
    """`env` (a rank's collective environment) with the PS role variables of `rank`:
    ``TRAINING_ROLE``, ``PADDLE_PSERVERS_IP_PORT_LIST``, ``PADDLE_TRAINERS_NUM``,
    ``PADDLE_TRAINER_ENDPOINTS`` (the trainers'), and ``POD_IP``/``PADDLE_PORT``
    (a server's own endpoint) or ``PADDLE_TRAINER_ID`` (a trainer's index)."""
    if len(endpoints) != num_servers + num_trainers:
        raise ValueError(f"ps_rank_environ: {len(endpoints)} endpoints for {num_servers} "
                         f"servers + {num_trainers} trainers")
    out = dict(env)
    servers, trainers = endpoints[:num_servers], endpoints[num_servers:]
    out.update({
        "PADDLE_PSERVERS_IP_PORT_LIST": ",".join(servers),
        "PADDLE_TRAINERS_NUM": str(num_trainers),
        "PADDLE_TRAINER_ENDPOINTS": ",".join(trainers),
    })
    if rank < num_servers:
        ip, _, port = servers[rank].rpartition(":")
        out.update({"TRAINING_ROLE": "PSERVER", "POD_IP": ip, "PADDLE_PORT": port,
                    "PADDLE_CURRENT_ENDPOINT": servers[rank]})
        out.pop("PADDLE_TRAINER_ID", None)
    else:
        tid = rank - num_servers
        out.update({"TRAINING_ROLE": "TRAINER", "PADDLE_TRAINER_ID": str(tid),
                    "PADDLE_CURRENT_ENDPOINT": trainers[tid]})
        out.pop("POD_IP", None)
        out.pop("PADDLE_PORT", None)
    return out
