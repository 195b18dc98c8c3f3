"""``fw.distributed.spawn``: ranks that join one COMM_WORLD through the parent's PMI
server, and failures that name the rank (its traceback, or its signal).

Like multiprocessing's spawn, the function must be importable by the children, so
each case runs a small script (its ``__main__`` functions are re-imported as
``__mp_main__`` in the ranks); argument checks run in-process (they fail before
any process starts)."""

import json
import os
import subprocess
import sys
import time

import pytest

from fw.distributed import spawn as spawn_mod
from fw.distributed.launch.env import clean_environ

TIMEOUT = 120

HEADER = r"""
import json, os, signal, sys, time
from fw.distributed.spawn import spawn, SpawnError

OUT = sys.argv[1]

def note(name, data):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(data, f)
"""


def run(tmp_path, body, timeout=TIMEOUT):
    script = tmp_path / "main.py"
    script.write_text(HEADER + body)
    return subprocess.run([sys.executable, str(script), str(tmp_path)], cwd=tmp_path,
                          env=clean_environ(), capture_output=True, text=True, timeout=timeout)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_ranks_allreduce_join_timeouts_and_exit_waits(tmp_path):
    """One script, three uses: join=True with an all-reduce; join=False then bounded
    join(timeout) calls; and non-daemon ranks still running when the parent's script
    ends, which are waited for at exit (like multiprocessing)."""
    res = run(tmp_path, r"""
def work(scale, tag):
    from mpi4py import MPI
    c = MPI.COMM_WORLD
    keys = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM",
            "FW_STORE_ENDPOINT", "FW_JOB_ID", "FW_DIST_TIMEOUT", "PMI_RANK"]
    note(f"r{c.Get_rank()}.json", {"rank": c.Get_rank(), "size": c.Get_size(),
         "sum": c.allreduce(scale * (c.Get_rank() + 1)), "tag": tag,
         "env": {k: os.environ.get(k) for k in keys}})

def slow(path, name):
    time.sleep(1.0)
    open(os.path.join(path, name + "." + os.environ["RANK"]), "w").write("1")

if __name__ == "__main__":
    ctx = spawn(work, args=(10, "x"), nprocs=3, timeout=17)
    print("joined", [w.returncode for w in ctx.processes])
    ctx = spawn(slow, args=(OUT, "done"), nprocs=2, join=False)
    first = ctx.join(timeout=0.05)
    deadline = time.monotonic() + 100
    while not ctx.join(timeout=0.5):
        assert time.monotonic() < deadline
    note("joins.json", {"first": first, "codes": [w.returncode for w in ctx.processes]})
    spawn(slow, args=(OUT, "late"), nprocs=2, join=False)
""")
    assert res.returncode == 0, res.stderr
    assert "joined [0, 0, 0]" in res.stdout
    rows = [json.loads((tmp_path / f"r{r}.json").read_text()) for r in range(3)]
    assert [(d["rank"], d["size"], d["sum"], d["tag"]) for d in rows] == \
        [(r, 3, 60, "x") for r in range(3)]
    for r, d in enumerate(rows):
        e = d["env"]
        assert e["RANK"] == e["PADDLE_TRAINER_ID"] == e["LOCAL_RANK"] == e["PMI_RANK"] == str(r)
        assert e["WORLD_SIZE"] == e["PADDLE_TRAINERS_NUM"] == "3"
        assert e["FW_STORE_ENDPOINT"].startswith("127.0.0.1:")
        assert e["FW_DIST_TIMEOUT"] == "17"
    assert len({d["env"]["FW_JOB_ID"] for d in rows}) == 1
    assert json.loads((tmp_path / "joins.json").read_text()) == {"first": False,
                                                                "codes": [0, 0]}
    for name in ("done", "late"):
        assert (tmp_path / f"{name}.0").exists() and (tmp_path / f"{name}.1").exists()


def test_an_exception_or_a_signal_names_the_rank(tmp_path):
    res = run(tmp_path, r"""
def work():
    r = int(os.environ["RANK"])
    note(f"pid{r}.json", os.getpid())
    if r == 1:
        time.sleep(0.5)
        raise ValueError("bad batch on rank 1")
    time.sleep(300)

def killed():
    if os.environ["RANK"] == "0":
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(300)

if __name__ == "__main__":
    t0 = time.monotonic()
    try:
        spawn(work, nprocs=3, grace=0.5)
    except SpawnError as e:
        note("err.json", {"msg": str(e), "rank": e.rank, "tb": e.traceback,
                          "code": e.exit_code, "took": time.monotonic() - t0})
    try:
        spawn(killed, nprocs=2, grace=0)
    except SpawnError as e:
        note("sig.json", {"msg": str(e), "rank": e.rank, "sig": e.signal_name,
                          "code": e.exit_code})
""")
    assert res.returncode == 0, res.stderr
    err = json.loads((tmp_path / "err.json").read_text())
    assert err["rank"] == 1 and err["code"] == 1
    assert err["msg"].startswith("spawn: rank 1 (pid ")
    assert "raised an exception" in err["msg"]
    assert "ValueError: bad batch on rank 1" in err["tb"]
    assert "main.py\", line 16, in work" in err["tb"]
    assert err["took"] < 60  # the sleeping ranks were killed, not waited for
    pids = [json.loads((tmp_path / f"pid{r}.json").read_text()) for r in range(3)]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)
    sig = json.loads((tmp_path / "sig.json").read_text())
    assert sig == {"msg": sig["msg"], "rank": 0, "sig": "SIGKILL", "code": None}
    assert "rank 0 (pid" in sig["msg"] and "died: signal SIGKILL" in sig["msg"]


def test_a_rank_that_skips_mpi_init_is_named_not_waited_for(tmp_path):
    res = run(tmp_path, r"""
def work():
    if os.environ["RANK"] == "1":
        time.sleep(300)
    from mpi4py import MPI
    MPI.COMM_WORLD.Barrier()

if __name__ == "__main__":
    t0 = time.monotonic()
    try:
        spawn(work, nprocs=2, pmi_timeout=2, grace=0)
    except SpawnError as e:
        note("err.json", {"msg": str(e), "took": time.monotonic() - t0})
""")
    assert res.returncode == 0, res.stderr
    err = json.loads((tmp_path / "err.json").read_text())
    assert "rank(s) 1 did not call MPI_Init within 2 s" in err["msg"]
    assert err["took"] < 60


def module_level(x):
    return x


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"nprocs": 0}, ValueError, r"'nprocs' must be a positive int or -1, got 0"),
    ({"nprocs": 2, "start_method": "fork"}, ValueError, r"start_method='fork'"),
    ({"nprocs": 2, "ips": "10.0.0.1,10.0.0.2"}, ValueError, r"this node only"),
    ({"nprocs": 3, "gpus": "0,1"}, ValueError, r"nprocs=3 but gpus='0,1' names 2 devices"),
    ({"nprocs": 2, "backend_x": 1}, TypeError, r"unknown option\(s\) \['backend_x'\]"),
    ({"args": 5}, TypeError, r"'args' must be a tuple or list, got int"),
])
def test_bad_arguments_fail_before_starting_anything(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        spawn_mod.spawn(module_level, **kwargs)


def test_unpicklable_function_and_stale_env_are_refused(monkeypatch):
    with pytest.raises(TypeError, match=r"spawn: cannot pickle func .*<lambda>"):
        spawn_mod.spawn(lambda: None, nprocs=1)
    with pytest.raises(TypeError, match=r"'func' must be callable, got int"):
        spawn_mod.spawn(3, nprocs=1)
    monkeypatch.setenv("PADDLE_TRAINER_ID", "2")
    with pytest.raises(Exception, match=r"fw.distributed.spawn: refusing to start: .*"
                                        r"PADDLE_TRAINER_ID=2"):
        spawn_mod.spawn(module_level, args=(1,), nprocs=1)


def test_default_nprocs_follows_cuda_visible_devices(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,3,5")
    assert spawn_mod._default_nprocs() == 3
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert spawn_mod._default_nprocs() == (os.cpu_count() or 1)
