"""Helpers of the comm tests: run a script on N ranks under the mpich wheel's
``mpiexec`` (hydra), always with a wall-clock bound, and parse what ranks print."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "comm_scripts")


def mpiexec() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    path = here if os.path.exists(here) else shutil.which("mpiexec")
    if path is None:
        raise RuntimeError("mpiexec not found: the mpich wheel (a dependency of fw-distributed) "
                           "is not installed in this environment")
    return path


def clean_env(**extra) -> dict:
    """The test process's environment without launcher/MPI variables (a test may run
    inside a launched job), plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PMI_", "FW_", "PADDLE_", "MPI_", "HYD", "OMPI_"))
           and k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                         "MASTER_ADDR", "MASTER_PORT")}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_mpi(script, n, *args, timeout=120, env=None, hydra_args=()):
    """Run comm_scripts/`script` on `n` ranks; returns the CompletedProcess (stdout
    and stderr as text). After `timeout` s the whole session (mpiexec, its proxy and
    the ranks) is killed and subprocess.TimeoutExpired raised with the output so far."""
    cmd = [mpiexec(), *hydra_args, "-n", str(n), sys.executable,
           os.path.join(SCRIPTS, script), *map(str, args)]
    return run_cmd(cmd, timeout, env)


def run_launcher(script, n, *args, timeout=120, env=None, launcher_args=()):
    """Run comm_scripts/`script` on `n` ranks under fw's launcher
    (``python -m fw.distributed.launch``: PMI from the launcher, the job's store
    at FW_STORE_ENDPOINT); rank logs go to a temporary --log_dir."""
    logs = tempfile.mkdtemp(prefix="fw_comm_logs_")
    cmd = [sys.executable, "-m", "fw.distributed.launch", "--nproc_per_node", str(n),
           "--log_dir", logs, *launcher_args, os.path.join(SCRIPTS, script), *map(str, args)]
    try:
        p = run_cmd(cmd, timeout, env)
        for name in sorted(os.listdir(logs)):
            with open(os.path.join(logs, name), errors="replace") as f:
                p.stderr += f"\n--- {name}\n" + f.read()[-4000:]
        return p
    finally:
        shutil.rmtree(logs, ignore_errors=True)


def run_cmd(cmd, timeout, env=None):
    """Run `cmd` in its own session with $COMM_TEST_OUT set; the CompletedProcess's
    ``reports`` is what the ranks emitted (comm_scripts/_emit.py)."""
    env = dict(env if env is not None else clean_env())
    outdir = tempfile.mkdtemp(prefix="fw_comm_test_")
    env["COMM_TEST_OUT"] = outdir
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)   # the session this call started
        out, err = p.communicate(timeout=30)
        raise subprocess.TimeoutExpired(cmd, timeout, output=out, stderr=err) from None
    done = subprocess.CompletedProcess(cmd, p.returncode, out, err)
    reports = []
    for name in sorted(os.listdir(outdir)):
        with open(os.path.join(outdir, name)) as f:
            reports.append(f.read())
    done.reports = "".join(reports)
    shutil.rmtree(outdir, ignore_errors=True)
    return done


def rank_lines(out: str, tag: str) -> dict:
    """{rank: text} of the lines ``<tag> <rank> <text>`` the ranks printed."""
    got = {}
    for m in re.finditer(rf"^{re.escape(tag)} (\d+) (.*)$", out, re.M):
        got[int(m.group(1))] = m.group(2)
    return got


def explain(p) -> str:
    return (f"exit code {p.returncode}\n--- reports\n{getattr(p, 'reports', '')[-6000:]}\n"
            f"--- stdout\n{p.stdout[-6000:]}\n--- stderr\n{p.stderr[-6000:]}")
