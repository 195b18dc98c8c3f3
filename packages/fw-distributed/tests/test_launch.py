"""``python -m fw.distributed.launch`` on one node: the environment every rank gets,
logs, a rank killed mid all-reduce, elastic restart from a checkpoint, bounded
waits (a rank that never reaches MPI_Init), stale environments, busy ports,
signals to the launcher. Every subprocess has a timeout; scripts are written
into tmp_path."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from fw.distributed.launch.env import clean_environ

TIMEOUT = 120  # seconds for one launcher run (generous: the machine is shared and loaded)


def launch(args, cwd, env=None, timeout=TIMEOUT):
    full = clean_environ()
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "fw.distributed.launch", *args], cwd=cwd,
                          env=full, capture_output=True, text=True, timeout=timeout)


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purposes
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_dead(pids, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if pid_alive(p)]


ENV_KEYS = ["PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM", "PADDLE_TRAINER_ENDPOINTS",
            "PADDLE_CURRENT_ENDPOINT", "PADDLE_RANK_IN_NODE", "RANK", "WORLD_SIZE", "LOCAL_RANK",
            "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "FW_STORE_ENDPOINT", "FW_JOB_ID",
            "FW_RESTART_COUNT", "FW_DIST_TIMEOUT", "FW_LOG_DIR", "PMI_RANK", "PMI_SIZE",
            "FLAGS_selected_gpus", "STALE_MARKER"]

ALLREDUCE = r"""
import json, os, sys, time
from mpi4py import MPI
c = MPI.COMM_WORLD
r = c.Get_rank()
total = c.allreduce(r * 10 + 1)
keys = sys.argv[2].split(",")
with open(os.path.join(sys.argv[1], f"env.{r}.json"), "w") as f:
    json.dump({"pid": os.getpid(), "mpi_rank": r, "mpi_size": c.Get_size(), "total": total,
               "env": {k: os.environ.get(k) for k in keys}}, f)
print(f"hello from rank {r}: total {total}", flush=True)
print(f"stderr line of rank {r}", file=sys.stderr, flush=True)
"""


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def read_envs(out, n):
    return [json.loads((out / f"env.{r}.json").read_text()) for r in range(n)]


def test_four_ranks_environment_logs_and_streaming(tmp_path):
    script = write(tmp_path, "w.py", ALLREDUCE)
    out = tmp_path / "out"
    out.mkdir()
    res = launch(["--nproc_per_node", "4", "--log_dir", "logs", "--timeout", "42",
                  "--devices", "0,1,2,3", script, str(out), ",".join(ENV_KEYS)],
                 cwd=tmp_path, env={"MASTER_PORT": "1", "STALE_MARKER": "kept"})
    assert res.returncode == 0, res.stderr
    envs = read_envs(out, 4)
    assert [e["mpi_size"] for e in envs] == [4] * 4
    assert [e["total"] for e in envs] == [64] * 4  # sum of r*10+1 over 4 ranks
    endpoints = envs[0]["env"]["PADDLE_TRAINER_ENDPOINTS"].split(",")
    assert len(endpoints) == 4 and len(set(endpoints)) == 4
    job = envs[0]["env"]["FW_JOB_ID"]
    store = envs[0]["env"]["FW_STORE_ENDPOINT"]
    assert store.startswith("127.0.0.1:") and store != "127.0.0.1:0"
    for r, e in enumerate(envs):
        env = e["env"]
        assert e["mpi_rank"] == r
        assert env["PADDLE_TRAINER_ID"] == env["RANK"] == env["PMI_RANK"] == str(r)
        assert env["PADDLE_TRAINERS_NUM"] == env["WORLD_SIZE"] == env["PMI_SIZE"] == "4"
        assert env["LOCAL_RANK"] == env["PADDLE_RANK_IN_NODE"] == str(r)
        assert env["LOCAL_WORLD_SIZE"] == "4"
        assert env["PADDLE_CURRENT_ENDPOINT"] == endpoints[r]
        assert env["PADDLE_TRAINER_ENDPOINTS"] == ",".join(endpoints)
        assert f"{env['MASTER_ADDR']}:{env['MASTER_PORT']}" == env["FW_STORE_ENDPOINT"] == store
        assert env["FW_JOB_ID"] == job and env["FW_RESTART_COUNT"] == "0"
        assert env["FW_DIST_TIMEOUT"] == "42"
        assert env["FW_LOG_DIR"] == str(tmp_path / "logs")
        assert env["FLAGS_selected_gpus"] == str(r)
        assert env["STALE_MARKER"] == "kept"  # the user's own variables pass through
    # one log per rank, stdout and stderr together
    for r in range(4):
        log = (tmp_path / "logs" / f"workerlog.{r}").read_text()
        assert f"hello from rank {r}: total 64" in log
        assert f"stderr line of rank {r}" in log
    # rank 0 streamed with a prefix, the others only in their logs
    assert "[rank 0] hello from rank 0: total 64" in res.stdout
    assert "rank 1" not in res.stdout and "hello from rank 2" not in res.stdout
    assert "[rank 0] stderr line of rank 0" in res.stdout
    # the summary
    for r in range(4):
        assert f"rank {r} (pid {envs[r]['pid']}): exit code 0" in res.stderr
    assert "all ranks exited 0" in res.stderr


def test_start_up_to_first_collective_is_quick(tmp_path):
    """Launcher start to the first collective (a Barrier right after MPI init) for 4 ranks.
    The target is <= 3 s on the idle 2-core reference machine; the bound here is looser
    because CI shares the machine (the asv benchmark tracks the real figure)."""
    script = write(tmp_path, "b.py", "import time\nfrom mpi4py import MPI\n"
                   "MPI.COMM_WORLD.Barrier()\n"
                   "print('BARRIER_DONE', time.time(), flush=True)\n")
    t0 = time.time()
    res = launch(["--nproc_per_node", "4", script], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    done = float(res.stdout.split("BARRIER_DONE")[1].split()[0])
    elapsed = done - t0
    print(f"launcher start -> first collective, 4 ranks: {elapsed:.2f} s")
    assert 0 < elapsed < 15.0


KILL_MID_ALLREDUCE = r"""
import os, signal, sys, time
import numpy as np
from mpi4py import MPI
c = MPI.COMM_WORLD
r = c.Get_rank()
open(os.path.join(sys.argv[1], f"pid.{r}"), "w").write(str(os.getpid()))
x = np.ones(1 << 16, np.float32)
y = np.empty_like(x)
c.Allreduce(x, y)
shm = sorted({ln.split()[-1] for ln in open(f"/proc/{os.getpid()}/maps")
              if "/dev/shm/mpich_shm_" in ln and not ln.rstrip().endswith("(deleted)")})
open(os.path.join(sys.argv[1], f"shm.{r}"), "w").write("\n".join(shm))
c.Barrier()
for step in range(1000000):
    if r == 1 and step == 20:
        os.kill(os.getpid(), signal.SIGKILL)
    c.Allreduce(x, y)
"""


def test_rank_killed_mid_allreduce_stops_the_job_and_names_it(tmp_path):
    script = write(tmp_path, "k.py", KILL_MID_ALLREDUCE)
    t0 = time.monotonic()
    res = launch(["--nproc_per_node", "3", "--grace", "1", script, str(tmp_path)], cwd=tmp_path)
    took = time.monotonic() - t0
    assert res.returncode == 128 + signal.SIGKILL, res.stderr
    assert "rank 1 (node 0, pid" in res.stderr and "died: signal SIGKILL" in res.stderr
    pids = [int((tmp_path / f"pid.{r}").read_text()) for r in range(3)]
    assert f"rank 1 (pid {pids[1]}): signal SIGKILL" in res.stderr
    # the survivors were stopped by the launcher (or MPICH ended them first: exit 1),
    # not left behind
    for r in (0, 2):
        assert re.search(rf"rank {r} \(pid {pids[r]}\): (signal SIG\w+ \(killed by the "
                         rf"launcher: rank 1 |exit code 1)", res.stderr), res.stderr
    assert wait_dead(pids) == []
    assert took < 60
    # MPICH's node segment, which the killed rank's job would leave in /dev/shm, is gone
    segments = {p for r in range(3) for p in (tmp_path / f"shm.{r}").read_text().split()}
    assert segments, "the ranks mapped no MPICH shared-memory segment"
    assert [p for p in segments if os.path.exists(p)] == []


RESTART = r"""
import json, os, signal, sys
import numpy as np
import fw
from mpi4py import MPI
c = MPI.COMM_WORLD
r = c.Get_rank()
out = sys.argv[1]
attempt = int(os.environ["FW_RESTART_COUNT"])
ckpt = os.path.join(out, f"ckpt.{r}.pdparams")
state = {"step": 0, "acc": 0.0}
if os.path.exists(ckpt):
    saved = fw.load(ckpt)
    state = {"step": int(saved["step"].numpy()), "acc": float(saved["acc"].numpy())}
with open(os.path.join(out, f"attempts.{r}"), "a") as f:
    f.write(f"{attempt} {os.environ['FW_JOB_ID']} {state['step']}\n")
while state["step"] < 8:
    state["acc"] += c.allreduce(state["step"] + 1.0)
    state["step"] += 1
    if state["step"] % 2 == 0:
        c.Barrier()  # every rank has the step before anyone checkpoints it
        fw.save({"step": fw.to_tensor(np.int64(state["step"])),
                 "acc": fw.to_tensor(np.float64(state["acc"]))}, ckpt)
        c.Barrier()
    if attempt == 0 and r == 1 and state["step"] == 5:
        os.kill(os.getpid(), signal.SIGKILL)
print(f"rank {r} finished: step {state['step']} acc {state['acc']}", flush=True)
with open(os.path.join(out, f"final.{r}"), "w") as f:
    json.dump(state, f)
"""


def test_max_restart_resumes_from_the_last_checkpoint(tmp_path):
    script = write(tmp_path, "t.py", RESTART)
    res = launch(["--nproc_per_node", "2", "--max_restart", "2", "--grace", "1", script,
                  str(tmp_path)], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "rank 1 (node 0, pid" in res.stderr and "signal SIGKILL" in res.stderr
    assert "restarting the job: attempt 1 of 2 (FW_RESTART_COUNT=1)" in res.stderr
    for r in range(2):
        rows = [ln.split() for ln in (tmp_path / f"attempts.{r}").read_text().splitlines()]
        # attempt 0 from scratch, attempt 1 from the step-4 checkpoint, under a new job id
        assert [(a, s) for a, _, s in rows] == [("0", "0"), ("1", "4")]
        assert rows[0][1] != rows[1][1]
        final = json.loads((tmp_path / f"final.{r}").read_text())
        # acc = sum over steps s of allreduce(s+1) over 2 ranks = 2 * (1+...+8), as if
        # the job had never failed
        assert final == {"step": 8, "acc": 72.0}
    # rank 0's log holds both attempts (appended)
    log = (tmp_path / "log" / "workerlog.0").read_text()
    assert log.count("rank 0 finished") == 1


def test_gives_up_after_max_restart(tmp_path):
    script = write(tmp_path, "f.py", "import os, sys\n"
                   "sys.exit(3 if os.environ['RANK'] == '1' else 0)\n")
    res = launch(["--nproc_per_node", "2", "--max_restart", "1", "--grace", "0", script],
                 cwd=tmp_path)
    assert res.returncode == 3
    # both attempts failed the same way (rank 0 may or may not still run when it is killed)
    assert len(re.findall(r"FAILED: rank 1 \(node 0, pid \d+\) died: exit code 3",
                          res.stderr)) == 2
    assert "giving up after 1 restart(s) (--max_restart 1)" in res.stderr


def test_rank_that_never_calls_mpi_init_fails_the_pmi_barrier_in_time(tmp_path):
    script = write(tmp_path, "h.py", "import os, time\n"
                   "if os.environ['RANK'] == '1':\n    time.sleep(300)\n"
                   "from mpi4py import MPI\nMPI.COMM_WORLD.Barrier()\n")
    t0 = time.monotonic()
    # 6 s: long enough for rank 2 to reach MPI_Init on a loaded machine, so only rank 1
    # is missing when the first rank's clock runs out
    res = launch(["--nproc_per_node", "3", "--pmi_timeout", "6", "--grace", "0", script],
                 cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    assert time.monotonic() - t0 < 60
    assert "MPI_Init: rank(s) 1 did not call MPI_Init within 6 s of the first rank " \
        "(rank(s) 0, 2 did and wait for them)" in res.stderr


def test_rank_exiting_without_mpi_init_while_others_wait_fails_fast(tmp_path):
    script = write(tmp_path, "e.py", "import os\n"
                   "if os.environ['RANK'] != '0':\n    raise SystemExit(0)\n"
                   "from mpi4py import MPI\nMPI.COMM_WORLD.Barrier()\n")
    t0 = time.monotonic()
    res = launch(["--nproc_per_node", "2", "--grace", "0", script], cwd=tmp_path)
    assert res.returncode == 1
    assert "rank 1 exited (exit code 0) while rank(s) 0 wait for it in MPI_Init" in res.stderr
    assert time.monotonic() - t0 < 60  # not the 300 s PMI timeout


def test_scripts_without_mpi_run_and_exit_codes_propagate(tmp_path):
    ok = write(tmp_path, "ok.py", "import os\nprint('plain', os.environ['RANK'])\n")
    res = launch(["--nproc_per_node", "2", ok], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "[rank 0] plain 0" in res.stdout
    assert "plain 1" in (tmp_path / "log" / "workerlog.1").read_text()
    bad = write(tmp_path, "bad.py", "import os, sys\n"
                "print('about to fail', flush=True)\n"
                "sys.exit(7 if os.environ['RANK'] == '1' else 0)\n")
    res = launch(["--nproc_per_node", "2", bad], cwd=tmp_path)
    assert res.returncode == 7
    assert "rank 1 (node 0, pid" in res.stderr and "died: exit code 7" in res.stderr
    # the failed rank's last log lines are shown
    assert "last lines of rank 1's log" in res.stderr and "about to fail" in res.stderr


def test_mpi_abort_is_reported(tmp_path):
    script = write(tmp_path, "a.py", "from mpi4py import MPI\nc = MPI.COMM_WORLD\n"
                   "c.Barrier()\nif c.Get_rank() == 1:\n    c.Abort(5)\nc.Barrier()\n")
    res = launch(["--nproc_per_node", "2", "--grace", "0", script], cwd=tmp_path)
    assert res.returncode == 5, res.stderr
    assert "rank 1" in res.stderr
    assert "MPI_Abort (exit code 5)" in res.stderr or "died: exit code 5" in res.stderr


@pytest.mark.parametrize("var", ["RANK", "PADDLE_TRAINER_ID", "PMI_FD", "WORLD_SIZE"])
def test_stale_environment_is_refused_by_name(tmp_path, var):
    script = write(tmp_path, "s.py", "print('ran')\n")
    res = launch(["--nproc_per_node", "2", script], cwd=tmp_path, env={var: "3"})
    assert res.returncode == 2
    assert f"refusing to start: the environment already has {var}=3" in res.stderr
    assert "--allow_stale_env" in res.stderr
    assert not (tmp_path / "log").exists()


def test_allow_stale_env_gives_the_ranks_fresh_values(tmp_path):
    script = write(tmp_path, "w.py", ALLREDUCE)
    out = tmp_path / "out"
    out.mkdir()
    res = launch(["--nproc_per_node", "2", "--allow_stale_env", script, str(out),
                  ",".join(ENV_KEYS)], cwd=tmp_path,
                 env={"RANK": "7", "WORLD_SIZE": "9", "PMI_PORT": "x:1", "FW_JOB_ID": "old"})
    assert res.returncode == 0, res.stderr
    envs = read_envs(out, 2)
    assert [e["env"]["RANK"] for e in envs] == ["0", "1"]
    assert [e["env"]["WORLD_SIZE"] for e in envs] == ["2", "2"]
    assert envs[0]["env"]["FW_JOB_ID"] != "old"


def test_busy_master_port_is_a_clear_error(tmp_path):
    script = write(tmp_path, "s.py", "print('ran')\n")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        res = launch(["--nproc_per_node", "1", "--master", f"127.0.0.1:{port}", script],
                     cwd=tmp_path)
    assert res.returncode == 2
    assert f"--master 127.0.0.1:{port}: node 0 cannot host the job's store there" in res.stderr
    assert f"port {port} is already in use" in res.stderr


SLEEPER = r"""
import os, sys, time
open(os.path.join(sys.argv[1], f"pid.{os.environ['RANK']}"), "w").write(str(os.getpid()))
time.sleep(300)
"""


def _start_launcher(tmp_path, n):
    script = write(tmp_path, "z.py", SLEEPER)
    env = clean_environ()
    proc = subprocess.Popen([sys.executable, "-m", "fw.distributed.launch", "--nproc_per_node",
                             str(n), script, str(tmp_path)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + TIMEOUT
    files = [tmp_path / f"pid.{r}" for r in range(n)]
    while not all(f.exists() and f.read_text() for f in files):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the ranks did not start"
        time.sleep(0.05)
    return proc, [int(f.read_text()) for f in files]


def test_sigterm_to_the_launcher_kills_every_rank(tmp_path):
    proc, pids = _start_launcher(tmp_path, 2)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "the launcher got SIGTERM" in err
    assert wait_dead(pids) == []


def test_ranks_die_with_a_sigkilled_launcher(tmp_path):
    proc, pids = _start_launcher(tmp_path, 2)
    proc.kill()
    proc.communicate(timeout=TIMEOUT)
    # PR_SET_PDEATHSIG: the kernel kills the orphans
    assert wait_dead(pids) == []


def test_module_mode_runs_a_module(tmp_path):
    (tmp_path / "mymod.py").write_text("import os\nprint('module rank', os.environ['RANK'])\n")
    res = launch(["--nproc_per_node", "2", "-m", "mymod"], cwd=tmp_path,
                 env={"PYTHONPATH": str(tmp_path)})
    assert res.returncode == 0, res.stderr
    assert "[rank 0] module rank 0" in res.stdout
    assert "module rank 1" in (tmp_path / "log" / "workerlog.1").read_text()


def test_fwrun_console_script_is_declared():
    from importlib.metadata import entry_points

    eps = [e for e in entry_points(group="console_scripts") if e.name == "fwrun"]
    assert eps and eps[0].value == "fw.distributed.launch.main:main"


E2E_KILL = r"""
import os, signal, sys
import numpy as np
import fw
import fw.distributed as dist
dist.init_parallel_env()
r = dist.get_rank()
x = fw.to_tensor(np.full(4, r + 1.0, np.float32))
dist.all_reduce(x)
print(f"rank {r} of {dist.get_world_size()}: {x.numpy().tolist()}", flush=True)
for step in range(10**6):
    if r == 1 and step == 5:
        os.kill(os.getpid(), signal.SIGKILL)
    dist.all_reduce(fw.to_tensor(np.ones(1024, np.float32)))
"""


def test_survivors_of_a_killed_rank_error_out_naming_it(tmp_path):
    """With fw.distributed's collectives: the launcher writes {FW_JOB_ID}/dead/1 into
    the store, the ranks blocked in all_reduce read it and raise naming rank 1 and
    its signal, well within the grace period (so nobody has to kill them)."""
    script = write(tmp_path, "e.py", E2E_KILL)
    res = launch(["--nproc_per_node", "3", "--timeout", "60", "--grace", "60", script],
                 cwd=tmp_path)
    assert res.returncode == 128 + signal.SIGKILL, res.stderr
    # no wall-clock bound here (start-up of 3 ranks on a loaded 2-core machine took 107 s
    # once): that the survivors raised by themselves, before the grace period ran out, is
    # shown by their "exit code 1" below (past the grace, the launcher kills them by signal)
    assert "[rank 0] rank 0 of 3: [6.0, 6.0, 6.0, 6.0]" in res.stdout
    assert "rank 1 (node 0, pid" in res.stderr and "died: signal SIGKILL" in res.stderr
    for r in (0, 2):
        assert re.search(rf"rank {r} \(pid \d+\): exit code 1\b", res.stderr), res.stderr
        log = (tmp_path / "log" / f"workerlog.{r}").read_text()
        assert "rank 1 died (signal SIGKILL)" in log
