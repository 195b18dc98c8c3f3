"""`calibrate`: measure this machine for the cost model and write a profile file.

Two parts, each in a subprocess with a timeout (so a stuck measurement cannot
hang the caller, and the kernels run with ``OMP_NUM_THREADS=1``, as each rank of a
multi-rank job on this machine does):

- kernels (``_calib_kernels.py``): fw's own ops, eager, through the public API —
  matmul per dtype over a few square sizes, a 3x3 convolution, ``exp`` (vector
  FLOP/s), ``add`` on large arrays (memory bandwidth), the per-op overhead of eager
  training (a tiny model's forward + backward time divided by the number of ops of
  its traced step) and the per-parameter overhead of an AdamW step;
- collectives (``_calib_collectives.py``): all_reduce, all_gather, reduce_scatter,
  broadcast, reduce and send/recv on 2 ranks under fw's launcher, through the MPI
  engine, over a few message sizes; a robust (Theil-Sen) line ``t = a + b * bytes`` per
  collective, turned into the link's ``alpha``/``beta`` of the 2-rank formula of
  `comm` (e.g. all_reduce's ring on 2 ranks is ``2 alpha + M beta``);
- sync wait: in that lockstep, each rank's wait at the barrier after its chunk
  (its peers finish equal work at different times): what each blocking collective of
  a training step adds beyond the engine's own cost (``collectives.sync_wait``);
- contention: a fixed compute chunk timed alone and with 2 and 4 ranks in lockstep,
  interleaved round by round (barriers between chunks, as training ranks meet at
  collectives): on a machine shared with other jobs, or with more ranks than cores,
  each rank computes slower;
  the ratios go into the profile (``contention``) and `Cluster.compute_slowdown`.

The profile is JSON (sorted keys, fixed layout, version 1) and holds only numbers
and strings; `load_profile` checks it.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time

__all__ = ["calibrate", "load_profile", "default_profile_path", "PROFILE_FORMAT"]

PROFILE_FORMAT = "fw-cost-profile"
_HERE = os.path.dirname(os.path.abspath(__file__))


def default_profile_path() -> str:
    """Where the measured cost profile is kept: ``$FW_COST_PROFILE``, else
    ``~/.cache/fw/cost_profile.json``.

    Returns:
        str: the path.

    Examples:
        >>> import fw
        >>> from fw.distributed.auto import default_profile_path
        >>> default_profile_path().endswith(".json")
        True
    """
    return os.environ.get("FW_COST_PROFILE") or os.path.join(
        os.path.expanduser("~"), ".cache", "fw", "cost_profile.json")


def _child_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PMI_", "FW_JOB", "FW_STORE", "PADDLE_", "MPI_", "HYD",
                                "OMPI_"))
           and k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                         "MASTER_ADDR", "MASTER_PORT")}
    env["OMP_NUM_THREADS"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def _run(cmd, timeout, what):
    # its own process group (killed as one on a timeout) but the caller's session, so
    # it shares the caller's scheduling group (a caller that raised its priority, as
    # the validation script does, measures at that priority)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=_child_env(), process_group=0)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        import signal

        os.killpg(p.pid, signal.SIGKILL)
        p.communicate(timeout=30)
        raise TimeoutError(f"calibrate: the {what} measurement did not finish within "
                           f"{timeout:.0f} s (machine overloaded? raise timeout=)") from None
    if p.returncode != 0:
        raise RuntimeError(f"calibrate: the {what} measurement failed (exit {p.returncode}):\n"
                           f"{err[-3000:]}")
    return out


def _fit(points):
    """Robust line ``t = a + b * x`` (Theil-Sen: the median of the pairwise slopes,
    then the median intercept), a, b >= 0: one message delayed by the scheduler of
    a loaded machine must not tilt the line."""
    import statistics

    pts = sorted((float(x), float(t)) for x, t in points)
    slopes = [(t2 - t1) / (x2 - x1) for i, (x1, t1) in enumerate(pts)
              for x2, t2 in pts[i + 1:] if x2 > x1]
    b = max(statistics.median(slopes), 1e-15) if slopes else 1e-15
    a = max(statistics.median(t - b * x for x, t in pts), 0.0)
    return a, b


# the 2-rank formulas of comm.py: t = ca * alpha + cb * M * beta
_TWO_RANK = {"all_reduce": (2, 1.0), "all_gather": (1, 0.5), "reduce_scatter": (1, 0.5),
             "broadcast": (1, 1.0), "reduce": (1, 1.0), "send_recv": (1, 1.0)}


def _machine():
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpu": cpu, "cores": int(cores or 1), "memory_bytes": int(mem or 8 << 30),
            "loadavg": [round(x, 2) for x in os.getloadavg()], "threads_per_rank": 1,
            "python": platform.python_version()}


def calibrate(path=None, budget: float = 30.0, collectives: bool = True,
              dtypes=("float32", "float64", "bfloat16"), timeout: float = 120.0) -> dict:
    """Measure fw's kernels and collectives on this machine and write a profile.

    Args:
        path (str, optional): where to write the JSON profile; default
            `default_profile_path()`.
        budget (float): seconds to spend (about; the kernels get ~60 %, the
            collectives the rest plus the launcher's start). The default stays under
            60 s on an idle 2-core machine.
        collectives (bool): also measure the collectives on 2 ranks (needs the MPI
            engine and fw's launcher).
        dtypes (tuple): dtypes whose matmul rate is measured.
        timeout (float): hard limit of each measuring subprocess, seconds.

    Returns:
        dict: the profile (as written).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> from fw.distributed.auto import calibrate
            >>> prof = calibrate(os.path.join(tempfile.mkdtemp(), "p.json"), budget=0.5,
            ...                  collectives=False)
            >>> prof["kernels"]["matmul_flops"]["float32"] > 0
            True
    """
    if not (isinstance(budget, (int, float)) and budget > 0):
        raise ValueError(f"calibrate: budget must be positive seconds, got {budget!r}")
    path = path or default_profile_path()
    t0 = time.perf_counter()
    kb = budget * (0.6 if collectives else 1.0)
    from fw.distributed.auto.op_cost import TRANSCENDENTAL

    out = _run([sys.executable, os.path.join(_HERE, "_calib_kernels.py"), str(kb),
                ",".join(dtypes), str(TRANSCENDENTAL)], timeout, "kernel")
    kernels = json.loads(out.strip().splitlines()[-1])
    prof = {"format": PROFILE_FORMAT, "version": 1,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "machine": _machine(), "kernels": kernels}
    if collectives:
        cb = max(budget - (time.perf_counter() - t0), 1.0)
        contention, sync, chunk = {"1": 1.0}, {}, {}
        sync_s, chunk_s, dp_sync = {}, {}, {}
        with tempfile.TemporaryDirectory(prefix="fw_calib_") as tmp:
            for n, mode in ((2, "collectives"), (4, "lockstep")):
                res = os.path.join(tmp, f"coll{n}.json")
                _run([sys.executable, "-m", "fw.distributed.launch", "--nproc_per_node", str(n),
                      "--log_dir", os.path.join(tmp, f"log{n}"), "--timeout", str(int(timeout)),
                      os.path.join(_HERE, "_calib_collectives.py"), res, str(cb), mode],
                     timeout, f"{n}-rank {mode}")
                with open(res) as f:
                    got = json.load(f)
                contention[str(n)] = got.pop("contention")
                sync[str(n)] = got.pop("sync_wait", 0.0)
                chunk[str(n)] = got.pop("sync_chunk", 0.0)
                sync_s[str(n)] = got.pop("sync_wait_short", 0.0)
                chunk_s[str(n)] = got.pop("sync_chunk_short", 0.0)
                dp_sync[str(n)] = got.pop("dp_sync", [])
                if mode == "collectives":
                    raw = got
        prof["contention"] = contention
        fits = {}
        for op, pts in sorted(raw.items()):
            a, b = _fit(pts)
            ca, cb_ = _TWO_RANK[op]
            fits[op] = {"alpha": a / ca, "beta": b / cb_}
        prof["collectives"] = {"ranks": 2, "engine": "mpi", "fits": fits, "raw": raw,
                               "sync_wait": sync, "sync_chunk": chunk,
                               "sync_wait_short": sync_s, "sync_chunk_short": chunk_s,
                               "dp_sync": dp_sync}
    prof["seconds"] = round(time.perf_counter() - t0, 2)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmpf = tempfile.mkstemp(dir=d, prefix=".profile_")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(prof, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmpf, path)
    return prof


def load_profile(path: str) -> dict:
    """Read and check a calibration profile (JSON; nothing is executed).

    Args:
        path (str): the file `calibrate` wrote.

    Returns:
        dict: the profile.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> from fw.distributed.auto import calibrate
            >>> from fw.distributed.auto.calibrate import load_profile
            >>> p = os.path.join(tempfile.mkdtemp(), "p.json")
            >>> _ = calibrate(p, budget=0.5, collectives=False)
            >>> load_profile(p)["format"]
            'fw-cost-profile'
    """
    if not os.path.exists(path):
        raise FileNotFoundError(f"load_profile: no calibration profile at {path!r}; run "
                                f"fw.distributed.auto.calibrate({path!r}) first")
    with open(path, encoding="utf-8") as f:
        try:
            prof = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"load_profile: {path!r} is not valid JSON: {e}") from None
    if not isinstance(prof, dict) or prof.get("format") != PROFILE_FORMAT:
        raise ValueError(f"load_profile: {path!r} is not an fw cost profile (format "
                         f"{PROFILE_FORMAT!r} expected)")
    if prof.get("version") != 1:
        raise ValueError(f"load_profile: {path!r} has version {prof.get('version')!r}; this "
                         f"fw reads version 1")
    k = prof.get("kernels", {})
    need = ("matmul_flops", "conv_flops", "vector_flops", "mem_bandwidth", "op_overhead")
    missing = [n for n in need if n not in k]
    if missing or "machine" not in prof:
        raise ValueError(f"load_profile: {path!r} lacks {missing or ['machine']}")
    return prof
