"""The launcher's flags (Paddle's names) and the environment it builds, in-process."""

import pytest

from fw.distributed.launch import env as E
from fw.distributed.launch.args import DEFAULT_IPS_PORT, LaunchError, parse_args


@pytest.fixture
def script(tmp_path):
    p = tmp_path / "train.py"
    p.write_text("print('x')\n")
    return str(p)


def test_defaults_follow_paddle(script):
    cfg = parse_args([script, "--lr", "0.1"])
    assert (cfg.nnodes, cfg.node_rank, cfg.nproc_per_node) == (1, 0, 1)
    assert cfg.log_dir == "log" and cfg.job_id == "default" and cfg.master is None
    assert cfg.max_restart == 0 and cfg.pmi_timeout == 300.0
    assert cfg.cmd == [script, "--lr", "0.1"]  # the script's own flags pass through


def test_devices_set_nproc_and_must_agree(script):
    assert parse_args(["--devices", "0,2,3", script]).nproc_per_node == 3
    assert parse_args(["--gpus", "1", script]).devices == ["1"]
    with pytest.raises(LaunchError, match=r"--nproc_per_node=2 but --devices=0,1,2 names 3"):
        parse_args(["--nproc_per_node", "2", "--devices", "0,1,2", script])


def test_multi_node_needs_master_and_rank(script):
    with pytest.raises(LaunchError, match=r"--nnodes=2: give --master host:port"):
        parse_args(["--nnodes", "2", "--rank", "0", script])
    with pytest.raises(LaunchError, match=r"give this node's --rank in \[0, 2\) \(got -1\)"):
        parse_args(["--nnodes", "2", "--master", "10.0.0.1:7000", script])
    cfg = parse_args(["--nnodes", "2:2", "--rank", "1", "--master", "http://10.0.0.1:7000",
                      script])
    assert (cfg.nnodes, cfg.node_rank, cfg.master) == (2, 1, ("10.0.0.1", 7000))
    with pytest.raises(LaunchError, match=r"--nnodes=2:3: elastic node ranges are not"):
        parse_args(["--nnodes", "2:3", "--rank", "0", "--master", "h:1", script])
    with pytest.raises(LaunchError, match=r"--rank=1 with --nnodes=1"):
        parse_args(["--rank", "1", script])


@pytest.mark.parametrize("master, match", [
    ("10.0.0.1", r"expected host:port"),
    ("10.0.0.1:http", r"the port 'http' is not a number"),
    ("10.0.0.1:70000", r"the port must be in \[1, 65535\]"),
    ("etcd://10.0.0.1:2379", r"etcd:// and other schemes are not supported"),
])
def test_bad_master(script, master, match):
    with pytest.raises(LaunchError, match=match):
        parse_args(["--master", master, script])


def test_ips_find_this_node(script):
    cfg = parse_args(["--ips", "10.255.255.1,127.0.0.1", script])
    assert (cfg.nnodes, cfg.node_rank, cfg.host) == (2, 1, "127.0.0.1")
    assert cfg.master == ("10.255.255.1", DEFAULT_IPS_PORT)
    with pytest.raises(LaunchError, match=r"cannot tell which address is this node's \(none"):
        parse_args(["--ips", "10.255.255.1,10.255.255.2", script])


@pytest.mark.parametrize("argv, match", [
    (["--run_mode", "rpc"], r"--run_mode='rpc': fw runs 'collective' and 'ps'"),
    (["--run_mode", "ps", "--server_num", "2"], r"--run_mode ps needs --trainer_num"),
    (["--server_num", "2"], r"--server_num needs --run_mode ps"),
    (["--run_mode", "ps", "--server_num", "1", "--trainer_num", "2", "--nproc_per_node", "2"],
     r"--nproc_per_node=2 but --server_num 1 \+ --trainer_num 2 = 3"),
    (["--run_mode", "ps", "--server_num", "1", "--trainer_num", "1", "--nnodes", "2",
      "--master", "127.0.0.1:1", "--rank", "0"], r"one node"),
    (["--max_restart", "-1"], r"--max_restart=-1: must be >= 0"),
    (["--log_level", "loud"], r"--log_level='loud'"),
    (["--nnodes", "two"], r"--nnodes='two': expected an integer"),
])
def test_bad_flags(script, argv, match):
    with pytest.raises(LaunchError, match=match):
        parse_args(argv + [script])


def test_ps_mode_starts_servers_then_trainers(script):
    from fw.distributed.launch.ps_env import ps_rank_environ

    cfg = parse_args(["--run_mode", "ps", "--server_num", "2", "--trainer_num", "3", script])
    assert cfg.ps == (2, 3) and cfg.nproc_per_node == 5
    eps = [f"127.0.0.1:{7000 + r}" for r in range(5)]
    base = {"PADDLE_TRAINER_ID": "1", "PATH": "/bin"}
    s1 = ps_rank_environ(base, 1, 2, 3, eps)
    assert (s1["TRAINING_ROLE"], s1["POD_IP"], s1["PADDLE_PORT"]) == ("PSERVER", "127.0.0.1",
                                                                       "7001")
    assert s1["PADDLE_PSERVERS_IP_PORT_LIST"] == "127.0.0.1:7000,127.0.0.1:7001"
    assert "PADDLE_TRAINER_ID" not in s1 and s1["PATH"] == "/bin"
    t2 = ps_rank_environ(base, 4, 2, 3, eps)
    assert (t2["TRAINING_ROLE"], t2["PADDLE_TRAINER_ID"], t2["PADDLE_TRAINERS_NUM"]) == \
        ("TRAINER", "2", "3")
    assert t2["PADDLE_TRAINER_ENDPOINTS"].split(",") == eps[2:] and "POD_IP" not in t2


def test_missing_script_and_module_mode(tmp_path):
    with pytest.raises(LaunchError, match=r"training_script 'nope.py': no such file"):
        parse_args(["nope.py"])
    assert parse_args(["-m", "pkg.train", "--epochs", "2"]).cmd == \
        ["-m", "pkg.train", "--epochs", "2"]


def test_numeric_flags_are_checked_by_argparse(script, capsys):
    with pytest.raises(SystemExit):
        parse_args(["--nproc_per_node", "0", script])
    assert "--nproc_per_node must be >= 1, got 0" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--pmi_timeout", "-3", script])
    assert "--pmi_timeout must be > 0 seconds" in capsys.readouterr().err


def test_stale_variables_are_named():
    env = {"RANK": "1", "PMI_FD": "5", "HOME": "/root", "MASTER_ADDR": "x"}
    assert E.stale_variables(env) == {"PMI_FD": "5", "RANK": "1"}
    with pytest.raises(E.StaleEnvironmentError,
                       match=r"already has PMI_FD=5, RANK=1\. .*--allow_stale_env"):
        E.check_stale_env(env)
    assert E.check_stale_env(env, allow=True) == {"PMI_FD": "5", "RANK": "1"}
    assert E.clean_environ(env) == {"HOME": "/root"}


def test_rank_environ_is_complete():
    env = E.rank_environ({"HOME": "/h", "OMP_NUM_THREADS": "3"}, rank=3, local_rank=1,
                         world_size=4,
                         local_world_size=2, endpoints=[f"h{i}:{i}" for i in range(4)],
                         store_endpoint="h0:99", job_id="j.1", restart_count=1, pmi_fd=7,
                         timeout=30, log_dir="/l", device="1")
    assert env == {
        "HOME": "/h", "OMP_NUM_THREADS": "3", "PADDLE_TRAINER_ID": "3", "PADDLE_TRAINERS_NUM": "4",
        "PADDLE_TRAINER_ENDPOINTS": "h0:0,h1:1,h2:2,h3:3", "PADDLE_CURRENT_ENDPOINT": "h3:3",
        "PADDLE_RANK_IN_NODE": "1", "RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1",
        "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "h0", "MASTER_PORT": "99",
        "FW_JOB_ID": "j.1", "FW_RESTART_COUNT": "1", "FW_STORE_ENDPOINT": "h0:99",
        "PMI_FD": "7", "PMI_RANK": "3", "PMI_SIZE": "4", "FW_DIST_TIMEOUT": "30",
        "FW_LOG_DIR": "/l", "FLAGS_selected_gpus": "1"}
    with pytest.raises(ValueError, match=r"2 endpoints for world_size 4"):
        E.rank_environ({}, rank=0, local_rank=0, world_size=4, local_world_size=4,
                       endpoints=["a:1", "b:2"], store_endpoint=None, job_id="j")


def test_ranks_of_a_node_share_its_cores(monkeypatch):
    """Without OMP_NUM_THREADS each of a node's ranks gets its share of the cores
    (OpenMP threads of several ranks spinning on the same cores slow all of them);
    one rank per node keeps the library defaults, and the user's setting wins."""
    monkeypatch.setattr(E.os, "cpu_count", lambda: 8)
    kw = dict(rank=0, local_rank=0, world_size=4, endpoints=[f"h:{i}" for i in range(4)],
              store_endpoint=None, job_id="j")
    assert E.rank_environ({}, local_world_size=4, **kw)["OMP_NUM_THREADS"] == "2"
    assert E.rank_environ({}, local_world_size=16, **kw)["OMP_NUM_THREADS"] == "1"
    assert "OMP_NUM_THREADS" not in E.rank_environ({}, local_world_size=1, **kw)
    assert E.rank_environ({"OMP_NUM_THREADS": "5"}, local_world_size=4,
                          **kw)["OMP_NUM_THREADS"] == "5"


def test_network_settings_only_for_several_nodes():
    assert E.mpich_network_environ("127.0.0.1", multi_node=False) == {}
    net = E.mpich_network_environ("127.0.0.1", multi_node=True)
    assert net == {"UCX_NET_DEVICES": "lo", "FI_TCP_IFACE": "lo"}
    assert E.mpich_network_environ("203.0.113.9", multi_node=True) == {}
