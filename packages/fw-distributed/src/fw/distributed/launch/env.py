"""The environment of a launched rank, and the check against a stale one.

Shared by the launcher and `fw.distributed.spawn`: both give every rank the
same variables (the contract in packages/fw-distributed/README.md,
"Launcher and world bring-up"), built from scratch so nothing of an outer job
leaks in.
"""

from __future__ import annotations

import os
import re

__all__ = ["StaleEnvironmentError", "STALE_VARIABLES", "stale_variables", "check_stale_env",
           "clean_environ", "rank_environ", "mpich_network_environ"]

# Variables that say "this process is a rank of a distributed job". Finding one in
# the launcher's own environment means it was started from inside another job's
# rank, where its children would inherit a wrong identity (Paddle's and torch's
# launchers silently overwrite them; a nested launch is almost always a mistake).
STALE_VARIABLES = ("PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM", "PADDLE_TRAINER_ENDPOINTS",
                   "PADDLE_CURRENT_ENDPOINT", "PADDLE_RANK_IN_NODE", "RANK", "WORLD_SIZE",
                   "LOCAL_RANK", "LOCAL_WORLD_SIZE", "FW_JOB_ID", "FW_STORE_ENDPOINT",
                   "FW_RESTART_COUNT", "PMIX_RANK", "OMPI_COMM_WORLD_RANK")
# PMI_FD/PMI_RANK/PMI_SIZE/PMI_PORT/PMI_ID...: any PMI_ variable is a process
# manager's; a child that inherits PMI_PORT would talk to a foreign hydra
_STALE_PREFIXES = ("PMI_",)
# removed from children but not a reason to refuse (users set them for torch in shells)
_OVERWRITTEN = ("MASTER_ADDR", "MASTER_PORT", "FW_DIST_TIMEOUT", "FW_LOG_DIR",
                "FLAGS_selected_gpus", "FW_PMI_TIMEOUT")


class StaleEnvironmentError(RuntimeError):
    """The launcher found another job's rank variables in its own environment."""


def stale_variables(environ=None) -> dict[str, str]:
    """The rank-identity variables set in ``environ`` (default ``os.environ``)."""
    environ = os.environ if environ is None else environ
    return {k: v for k, v in sorted(environ.items())
            if k in STALE_VARIABLES or k.startswith(_STALE_PREFIXES)}


def check_stale_env(environ=None, allow: bool = False, who: str = "fw.distributed.launch"):
    """Refuse to start when ``environ`` already carries a rank's identity.

    Raises `StaleEnvironmentError` naming the variables unless ``allow``
    (the launcher's ``--allow_stale_env``); the children get fresh values
    either way (`clean_environ`)."""
    found = stale_variables(environ)
    if found and not allow:
        shown = ", ".join(f"{k}={v}" for k, v in found.items())
        raise StaleEnvironmentError(
            f"{who}: refusing to start: the environment already has {shown}. "
            "These say this process is a rank of another distributed job (a launcher "
            "started from inside a launched script?). Unset them, or pass "
            "--allow_stale_env to start anyway (the ranks get fresh values).")
    return found


def clean_environ(environ=None) -> dict[str, str]:
    """A copy of ``environ`` without any rank-identity or launcher variable."""
    environ = os.environ if environ is None else environ
    return {k: v for k, v in environ.items()
            if not (k in STALE_VARIABLES or k in _OVERWRITTEN or k.startswith(_STALE_PREFIXES))}


def rank_environ(base: dict[str, str], *, rank: int, local_rank: int, world_size: int,
                 local_world_size: int, endpoints: list[str], store_endpoint: str | None,
                 job_id: str, restart_count: int = 0, pmi_fd: int | None = None,
                 timeout: float | None = None, log_dir: str | None = None,
                 device: str | None = None) -> dict[str, str]:
    """The full environment of one rank (see the README's table).

    ``base`` should come from `clean_environ`; ``endpoints`` has one
    ``host:port`` per global rank (Paddle's ``PADDLE_TRAINER_ENDPOINTS``)."""
    if len(endpoints) != world_size:
        raise ValueError(f"rank_environ: {len(endpoints)} endpoints for world_size {world_size}")
    env = dict(base)
    master = store_endpoint or endpoints[0]
    master_addr, _, master_port = master.rpartition(":")
    env.update({
        "PADDLE_TRAINER_ID": str(rank),
        "PADDLE_TRAINERS_NUM": str(world_size),
        "PADDLE_TRAINER_ENDPOINTS": ",".join(endpoints),
        "PADDLE_CURRENT_ENDPOINT": endpoints[rank],
        "PADDLE_RANK_IN_NODE": str(local_rank),
        "RANK": str(rank),
        "WORLD_SIZE": str(world_size),
        "LOCAL_RANK": str(local_rank),
        "LOCAL_WORLD_SIZE": str(local_world_size),
        "MASTER_ADDR": master_addr,
        "MASTER_PORT": master_port,
        "FW_JOB_ID": job_id,
        "FW_RESTART_COUNT": str(int(restart_count)),
    })
    if store_endpoint:
        env["FW_STORE_ENDPOINT"] = store_endpoint
    if pmi_fd is not None:
        env.update({"PMI_FD": str(pmi_fd), "PMI_RANK": str(rank), "PMI_SIZE": str(world_size)})
    if timeout is not None:
        env["FW_DIST_TIMEOUT"] = f"{float(timeout):g}"
    if log_dir is not None:
        env["FW_LOG_DIR"] = log_dir
    if device is not None:
        # Paddle's launcher names each rank's accelerator this way (FLAGS_selected_gpus)
        env["FLAGS_selected_gpus"] = device
    if "OMP_NUM_THREADS" not in env and local_world_size > 1:
        # Ranks on one node share its cores: oneDNN's OpenMP threads spin while they
        # wait, so two ranks of two threads each on two cores ran ~20x slower than two
        # ranks of one thread (measured on the GPT example). An explicit setting wins.
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // local_world_size))
    return env


_IFACE_OK = re.compile(r"^[A-Za-z0-9_.:@-]+$")


def interface_of(address: str) -> str | None:
    """The name of the network interface holding IPv4 ``address`` (Linux), or None."""
    import fcntl
    import socket
    import struct

    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return None
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for name in names:
            try:
                # SIOCGIFADDR: the interface's IPv4 address
                raw = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))
            except OSError:
                continue
            if socket.inet_ntoa(raw[20:24]) == address and _IFACE_OK.match(name):
                return name
    return None


def mpich_network_environ(address: str, multi_node: bool) -> dict[str, str]:
    """Settings that make MPICH's network module use the address this node advertises.

    The mpich wheel is built with ch4:ucx and ch4:ofi. Between nodes, UCX (the
    default netmod) picks every interface it finds, and may pick one the other
    node cannot reach (in network namespaces: none but the veth is shared); so
    the launcher tells UCX the interface of the advertised address
    (``UCX_NET_DEVICES``, UCX's documented variable) and keeps the shared-memory
    and TCP transports. Only set for multi-node jobs, and never over a value the
    user already exported."""
    if not multi_node:
        return {}
    env = {}
    iface = interface_of(address)
    if iface is not None:
        env["UCX_NET_DEVICES"] = iface
        env["FI_TCP_IFACE"] = iface
    return env
