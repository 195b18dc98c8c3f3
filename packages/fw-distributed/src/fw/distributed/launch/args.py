"""The launcher's command line: Paddle 3.x's ``paddle.distributed.launch`` flags.

Names and defaults follow Paddle's documentation of
``python -m paddle.distributed.launch`` (``--master``, ``--rank``,
``--nnodes``, ``--nproc_per_node``, ``--log_dir``, ``--run_mode``,
``--job_id``, ``--devices``, ``--host``, ``--max_restart``, ``--ips``,
``--log_level``); fw adds ``--timeout``, ``--pmi_timeout``, ``--grace``,
``--allow_stale_env`` and torchrun's ``-m``.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

__all__ = ["LaunchError", "LaunchConfig", "build_parser", "parse_args"]

# the master port used with --ips alone (Paddle's legacy launcher also starts
# from a fixed port there); a busy port is reported, never assumed free
DEFAULT_IPS_PORT = 6170


class LaunchError(RuntimeError):
    """The launch cannot go on: bad flags, a busy port, a failed rendezvous."""


@dataclass
class LaunchConfig:
    nnodes: int
    node_rank: int
    nproc_per_node: int
    master: tuple[str, int] | None  # (host, port); None: a local store on a free port
    host: str | None                # the address this node advertises (None: work it out)
    log_dir: str
    job_id: str
    devices: list[str] | None
    max_restart: int
    timeout: float | None
    pmi_timeout: float
    rendezvous_timeout: float
    grace: float
    allow_stale_env: bool
    log_level: str
    cmd: list[str]                  # the rank's argv without the interpreter
    module: bool
    ps: tuple[int, int] | None = None  # --run_mode ps: (server_num, trainer_num)


def _positive_int(name):
    def conv(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} expects an integer, got {text!r}") from None
        if v < 1:
            raise argparse.ArgumentTypeError(f"{name} must be >= 1, got {v}")
        return v
    return conv


def _seconds(name):
    def conv(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} expects seconds, got {text!r}") from None
        if not v > 0:
            raise argparse.ArgumentTypeError(f"{name} must be > 0 seconds, got {v:g}")
        return v
    return conv


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m fw.distributed.launch",
        description="Start a distributed fw job: N ranks on this node (and, with --nnodes, "
                    "the same on every other node, each running its own launcher).",
        allow_abbrev=False)
    p.add_argument("--master", default=None,
                   help="host:port of the job's store, hosted by the node-0 launcher (a free "
                        "port is picked when left out on a single node). Default: None")
    p.add_argument("--rank", type=int, default=-1,
                   help="this node's rank in [0, nnodes); required with --nnodes > 1 unless "
                        "--ips names this node. Default: -1")
    p.add_argument("--nnodes", default="1", help="number of nodes. Default: 1")
    p.add_argument("--nproc_per_node", type=_positive_int("--nproc_per_node"), default=None,
                   help="ranks per node (default: the number of --devices, else 1)")
    p.add_argument("--log_dir", default="log",
                   help="one log file per rank, workerlog.<rank>. Default: log")
    p.add_argument("--run_mode", default="collective",
                   help="'collective', or 'ps' (parameter servers and trainers: "
                        "--server_num, --trainer_num). Default: collective")
    p.add_argument("--server_num", type=_positive_int("--server_num"), default=None,
                   help="--run_mode ps: the number of parameter servers")
    p.add_argument("--trainer_num", type=_positive_int("--trainer_num"), default=None,
                   help="--run_mode ps: the number of trainers")
    p.add_argument("--job_id", default="default", help="job name. Default: default")
    p.add_argument("--devices", "--gpus", default=None,
                   help="comma-separated device ids, one rank each (FLAGS_selected_gpus)")
    p.add_argument("--host", default=None,
                   help="the address this node advertises to the others (default: the "
                        "local address that routes to --master)")
    p.add_argument("--ips", default=None,
                   help="comma-separated node addresses (Paddle's collective --ips): sets "
                        "--nnodes, this node's --rank and, unless given, --master "
                        f"(first address, port {DEFAULT_IPS_PORT})")
    p.add_argument("--max_restart", type=int, default=0,
                   help="restart the whole job up to this many times after a rank fails "
                        "(FW_RESTART_COUNT tells the script; it resumes from its own "
                        "checkpoint). Default: 0")
    p.add_argument("--timeout", type=_seconds("--timeout"), default=None,
                   help="default collective timeout of the ranks in seconds (FW_DIST_TIMEOUT)")
    p.add_argument("--pmi_timeout", type=_seconds("--pmi_timeout"), default=None,
                   help="seconds a PMI barrier (MPI_Init's wire-up) may wait for its last "
                        "rank (default: FW_PMI_TIMEOUT or 300)")
    p.add_argument("--rendezvous_timeout", type=_seconds("--rendezvous_timeout"), default=300.0,
                   help="seconds the nodes' launchers wait for each other. Default: 300")
    p.add_argument("--grace", type=float, default=3.0,
                   help="seconds the other ranks get to exit on their own after a rank "
                        "died, before the launcher kills them. Default: 3")
    p.add_argument("--allow_stale_env", action="store_true",
                   help="start even if this environment already has a rank's variables "
                        "(RANK, PADDLE_TRAINER_ID, PMI_*...)")
    p.add_argument("--log_level", default="INFO",
                   help="the launcher's own messages: DEBUG/INFO/WARNING/ERROR. Default: INFO")
    p.add_argument("-m", "--module", action="store_true",
                   help="run training_script as a module (python -m)")
    p.add_argument("training_script", help="the script (or, with -m, the module) each rank runs")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _parse_master(text: str, what: str) -> tuple[str, int]:
    for scheme in ("http://", "tcp://"):
        if text.startswith(scheme):
            text = text[len(scheme):]
    if "://" in text:
        raise LaunchError(f"{what}={text!r}: fw's master is its own TCP store; etcd:// and "
                          "other schemes are not supported")
    host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise LaunchError(f"{what}={text!r}: expected host:port")
    try:
        port_n = int(port)
    except ValueError:
        raise LaunchError(f"{what}={text!r}: the port {port!r} is not a number") from None
    if not 0 < port_n < 65536:
        raise LaunchError(f"{what}={text!r}: the port must be in [1, 65535]")
    return host.strip("[]"), port_n


def _local_address(addr: str) -> bool:
    """Whether ``addr`` belongs to this machine (binding it succeeds only then)."""
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind((addr, 0))
        return True
    except OSError:
        return False


def parse_args(argv=None) -> LaunchConfig:
    """Parse and check the flags; every inconsistency is a `LaunchError` naming the flags."""
    ns = build_parser().parse_args(argv)
    if ns.run_mode not in ("collective", "ps"):
        raise LaunchError(f"--run_mode={ns.run_mode!r}: fw runs 'collective' and 'ps' "
                          "(parameter-server) jobs")
    ps = _ps_config(ns)
    nnodes_text = str(ns.nnodes)
    if ":" in nnodes_text:  # Paddle's elastic range "min:max"
        lo, _, hi = nnodes_text.partition(":")
        if lo != hi:
            raise LaunchError(f"--nnodes={nnodes_text}: elastic node ranges are not supported; "
                              "give a fixed number of nodes (restarts: --max_restart)")
        nnodes_text = lo
    try:
        nnodes = int(nnodes_text)
    except ValueError:
        raise LaunchError(f"--nnodes={ns.nnodes!r}: expected an integer") from None
    if nnodes < 1:
        raise LaunchError(f"--nnodes={nnodes}: must be >= 1")
    node_rank = ns.rank
    master = _parse_master(ns.master, "--master") if ns.master else None
    host = ns.host
    if ns.ips:
        ips = [ip.strip() for ip in ns.ips.split(",") if ip.strip()]
        if ns.nnodes != "1" and int(nnodes_text) != len(ips):
            raise LaunchError(f"--ips names {len(ips)} nodes but --nnodes={ns.nnodes}")
        nnodes = len(ips)
        if node_rank < 0:
            here = [i for i, ip in enumerate(ips) if (ns.host == ip if ns.host else
                                                       _local_address(ip))]
            if len(here) != 1:
                raise LaunchError(f"--ips={ns.ips}: cannot tell which address is this node's "
                                  f"({'none' if not here else 'several'} of them are local); "
                                  "give --rank or --host")
            node_rank = here[0]
        host = host or ips[node_rank]
        if master is None:
            master = (ips[0], DEFAULT_IPS_PORT)
    if nnodes > 1:
        if master is None:
            raise LaunchError(f"--nnodes={nnodes}: give --master host:port (node 0's "
                              "address and a free port there), the same on every node")
        if not 0 <= node_rank < nnodes:
            raise LaunchError(f"--nnodes={nnodes}: give this node's --rank in [0, {nnodes}) "
                              f"(got {node_rank}); node 0 hosts the store at --master")
    else:
        if node_rank not in (-1, 0):
            raise LaunchError(f"--rank={node_rank} with --nnodes=1: the only node is rank 0")
        node_rank = 0
    devices = [d.strip() for d in ns.devices.split(",") if d.strip()] if ns.devices else None
    nproc = ns.nproc_per_node
    if devices is not None:
        if nproc is None:
            nproc = len(devices)
        elif nproc != len(devices):
            raise LaunchError(f"--nproc_per_node={nproc} but --devices={ns.devices} names "
                              f"{len(devices)} devices (one rank per device)")
    nproc = nproc or 1
    if ps is not None:
        if nnodes > 1:
            raise LaunchError("--run_mode ps: parameter-server jobs run on one node "
                              f"(--nnodes={nnodes} is not supported)")
        if ns.nproc_per_node is not None and nproc != sum(ps):
            raise LaunchError(f"--run_mode ps: --nproc_per_node={nproc} but --server_num "
                              f"{ps[0]} + --trainer_num {ps[1]} = {sum(ps)} processes")
        nproc = sum(ps)
    if ns.max_restart < 0:
        raise LaunchError(f"--max_restart={ns.max_restart}: must be >= 0")
    if ns.grace < 0:
        raise LaunchError(f"--grace={ns.grace}: must be >= 0 seconds")
    level = ns.log_level.upper()
    if level not in ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET"):
        raise LaunchError(f"--log_level={ns.log_level!r}: expected one of CRITICAL, ERROR, "
                          "WARNING, INFO, DEBUG, NOTSET")
    from fw.distributed._pmi import barrier_timeout_from_env

    try:
        pmi_timeout = ns.pmi_timeout or barrier_timeout_from_env()
    except ValueError as e:
        raise LaunchError(str(e)) from None
    script = ns.training_script
    if not ns.module and not os.path.exists(script):
        raise LaunchError(f"training_script {script!r}: no such file (use -m for a module)")
    return LaunchConfig(
        nnodes=nnodes, node_rank=node_rank, nproc_per_node=nproc, master=master, host=host,
        log_dir=ns.log_dir, job_id=ns.job_id, devices=devices, max_restart=ns.max_restart,
        timeout=ns.timeout, pmi_timeout=pmi_timeout, rendezvous_timeout=ns.rendezvous_timeout,
        grace=ns.grace, allow_stale_env=ns.allow_stale_env, log_level=level,
        cmd=(["-m", script] if ns.module else [script]) + list(ns.training_script_args),
        module=ns.module, ps=ps)


def _ps_config(ns):
    """(server_num, trainer_num) under --run_mode ps, else None (and the PS flags
    are refused in a collective job)."""
    if ns.run_mode != "ps":
        given = [f for f in ("server_num", "trainer_num") if getattr(ns, f) is not None]
        if given:
            raise LaunchError(f"--{given[0]} needs --run_mode ps")
        return None
    missing = [f"--{f}" for f in ("server_num", "trainer_num") if getattr(ns, f) is None]
    if missing:
        raise LaunchError(f"--run_mode ps needs {' and '.join(missing)}")
    if ns.devices:
        raise LaunchError("--run_mode ps runs on CPUs; --devices is not supported with it")
    return ns.server_num, ns.trainer_num
