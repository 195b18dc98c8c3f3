"""Parameter-server jobs on loopback: ``python -m fw.distributed.launch --run_mode
ps`` with 2 servers + 2 trainers training the wide & deep CTR model of
ps_ctr.py over a 10^6-id space (sync mode: equal to single-process training),
saving, reloading onto 3 (and, slow, 1) servers, a killed server named by the
trainers, no process left after stop_worker; async and geo (slow). Every launch
is bounded by a timeout and its whole session killed if it runs over."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from fw.distributed.launch.env import clean_environ

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "ps_scripts", "ctr_job.py")
TIMEOUT = 150
STEPS, BATCH, LR = 30, 64, 0.05


def _ctr():
    sys.path.insert(0, HERE)
    try:
        import ps_ctr
    finally:
        sys.path.remove(HERE)
    return ps_ctr


def launch_ps(tmp, name, servers, trainers, *args, launcher=(), env=None, timeout=TIMEOUT):
    out = tmp / name
    out.mkdir()
    logs = tmp / f"{name}-logs"
    full = clean_environ()
    full.update({"OMP_NUM_THREADS": "1", "FW_DIST_TIMEOUT": "60"})
    full.update(env or {})
    cmd = [sys.executable, "-m", "fw.distributed.launch", "--run_mode", "ps", "--server_num",
           str(servers), "--trainer_num", str(trainers), "--log_dir", str(logs), *launcher,
           SCRIPT, str(out), *map(str, args)]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        so, se = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        so, se = p.communicate(timeout=30)
        pytest.fail(f"the PS job ran over {timeout} s:\n{so}\n{se}\n{_logs(logs)}")
    wall = time.monotonic() - t0
    return p.returncode, so + se, _logs(logs), out, wall


def _logs(d):
    if not d.exists():
        return {}
    return {n: (d / n).read_text(errors="replace") for n in sorted(os.listdir(d))}


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _pids(out):
    return {n: int((out / n).read_text()) for n in os.listdir(out) if n.startswith("pid.")}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """2 servers + 2 trainers, sync mode, saved at the end; and the reference."""
    tmp = tmp_path_factory.mktemp("ps")
    ckpt = tmp / "ckpt"
    rc, text, logs, out, wall = launch_ps(tmp, "train", 2, 2, "sync", STEPS, "--batch", BATCH,
                                          "--lr", LR, "--save", ckpt)
    assert rc == 0, f"{text}\n{logs}"
    res = json.loads((out / "result.json").read_text())
    ref_auc, ref_score, ref_model = _ctr().train_reference(STEPS, 2, BATCH, LR)
    ref_dense = np.concatenate([p.numpy().ravel() for n, p in ref_model.named_parameters()
                                if ".emb." not in n])
    return {"res": res, "out": out, "ckpt": ckpt, "ref_auc": ref_auc, "ref_score": ref_score,
            "ref_dense": ref_dense, "wall": wall, "logs": logs}


def test_sync_training_matches_single_process(trained):
    res = trained["res"]
    print(f"PS AUC {res['auc']:.4f}, single process {trained['ref_auc']:.4f}, "
          f"job {trained['wall']:.1f} s (training {res['train_s']:.1f} s)")
    assert res["auc"] > 0.62, "the model did not learn"
    assert abs(res["auc"] - trained["ref_auc"]) < 0.01
    # sync mode is single-process training on the concatenated batches
    np.testing.assert_allclose(res["score"], trained["ref_score"], rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(res["dense"], trained["ref_dense"], rtol=1e-3, atol=1e-4)


def test_stop_worker_leaves_no_process(trained):
    pids = _pids(trained["out"])
    assert sorted(pids) == ["pid.server.0", "pid.server.1", "pid.trainer.0", "pid.trainer.1"]
    end = time.monotonic() + 10
    while any(_alive(p) for p in pids.values()) and time.monotonic() < end:
        time.sleep(0.1)
    assert not [n for n, p in pids.items() if _alive(p)]
    assert all("done" in t for n, t in trained["logs"].items()), trained["logs"]


def _check_reload(trained, out):
    man = json.loads((trained["ckpt"] / "manifest.json").read_text())
    assert man["num_shards"] == 2 and len(man["sparse"]) == 2
    chk = json.loads((out / "check.0.json").read_text())
    assert chk["rows"] == sum(t["rows"] for t in man["sparse"]) > 1000
    assert chk["max_abs_diff"] == 0.0
    assert np.array_equal(np.float32(chk["dense"]), np.float32(trained["res"]["dense"]))


def test_reload_onto_3_servers_then_a_killed_server_is_named(trained, tmp_path):
    """One job (to keep CI short): 3 servers load the 2 servers' checkpoint; trainer 0
    finds every saved row and the dense values; then server 1 is SIGKILLed while
    both trainers train (async), and both raise naming it, within the timeout."""
    rc, text, logs, out, wall = launch_ps(
        tmp_path, "reload", 3, 2, "async", 100000, "--load", trained["ckpt"], "--check-rows",
        trained["ckpt"], "--kill-server", 1, 0.5, launcher=("--grace", "20"),
        env={"FLAGS_rpc_deadline": "30000"})
    _check_reload(trained, out)
    assert rc != 0
    killed = re.search(r"KILLING server 1 at ([0-9.]+)", "".join(logs.values()))
    assert killed, logs
    fails = [(float(m.group(1)), m.group(0)) for t in logs.values()
             for m in re.finditer(r"TRAINER \d FAILED at ([0-9.]+).*", t)]
    assert len(fails) == 2, logs
    for when, line in fails:
        assert "parameter server 1 (rank 1" in line and "died (signal SIGKILL)" in line, line
        assert when - float(killed.group(1)) < 30.0      # within FLAGS_rpc_deadline
    print(f"trainers raised {max(w for w, _ in fails) - float(killed.group(1)):.2f} s after "
          f"the kill; job {wall:.1f} s")


@pytest.mark.slow
def test_reload_onto_1_server(trained, tmp_path):
    rc, text, logs, out, _ = launch_ps(tmp_path, "reload1", 1, 1, "sync", 0, "--load",
                                       trained["ckpt"], "--check-rows", trained["ckpt"])
    assert rc == 0, f"{text}\n{logs}"
    _check_reload(trained, out)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["async", "geo"])
def test_async_and_geo_training_reach_the_single_process_auc(trained, tmp_path, mode):
    """Async (each push applied at once) and geo (k_steps=4 local steps, then the
    trainers' deltas / 2 added on the servers) follow other trajectories than
    single-process training, but end within 0.01 AUC of it."""
    rc, text, logs, out, _ = launch_ps(tmp_path, mode, 2, 2, mode, STEPS, "--batch", BATCH,
                                       "--lr", LR)
    assert rc == 0, f"{text}\n{logs}"
    res = json.loads((out / "result.json").read_text())
    print(f"{mode}: AUC {res['auc']:.4f}, single process {trained['ref_auc']:.4f}")
    assert abs(res["auc"] - trained["ref_auc"]) < 0.01
    assert not np.allclose(res["dense"], trained["ref_dense"], atol=1e-4)  # not sync
