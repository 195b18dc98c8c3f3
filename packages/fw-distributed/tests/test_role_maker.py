"""fleet's role makers (Paddle's PaddleCloudRoleMaker / UserDefinedRoleMaker / Role),
fleet.Fleet and fleet.UtilBase: the environment parsing against the values Paddle
3.3's role makers give for the same environment, the errors, get_file_shard's
split, and (2 ranks under the launcher) util's collectives of numbers."""
import os
import sys

import pytest

from fw.distributed import fleet
from fw.distributed.fleet import PaddleCloudRoleMaker, Role, UserDefinedRoleMaker

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from comm_testutil import explain, rank_lines, run_launcher  # noqa: E402

_VARS = ("PADDLE_PSERVERS_IP_PORT_LIST", "PADDLE_TRAINER_ENDPOINTS", "PADDLE_TRAINERS_NUM",
         "TRAINING_ROLE", "PADDLE_TRAINER_ID", "POD_IP", "PADDLE_PORT",
         "PADDLE_CURRENT_ENDPOINT", "PADDLE_RANK_IN_NODE")
_SERVERS = "127.0.0.1:36001,127.0.0.2:36001,127.0.0.2:36002"


@pytest.fixture
def env(monkeypatch):
    for k in _VARS:
        monkeypatch.delenv(k, raising=False)

    def set_(**kw):
        for k, v in kw.items():
            monkeypatch.setenv(k, str(v))
    return set_


def test_role_values_are_paddles():
    assert (Role.WORKER, Role.SERVER, Role.HETER_WORKER, Role.ALL, Role.COORDINATOR) == \
        (1, 2, 3, 4, 5)


def test_ps_server_from_env(env):
    env(PADDLE_PSERVERS_IP_PORT_LIST=_SERVERS, PADDLE_TRAINERS_NUM=4, TRAINING_ROLE="PSERVER",
        POD_IP="127.0.0.2", PADDLE_PORT=36002,
        PADDLE_TRAINER_ENDPOINTS="10.0.0.1:6170,10.0.0.1:6171,10.0.0.2:6170,10.0.0.2:6171")
    r = PaddleCloudRoleMaker(is_collective=False)
    assert r._is_server() and not r._is_worker() and not r._is_first_worker()
    assert r._server_index() == 2 and r._role_id() == 2
    assert r._server_num() == 3 and r._worker_num() == 4 and r._node_num() == 2
    assert r._get_pserver_endpoints() == _SERVERS.split(",")
    assert r._get_trainer_endpoints()[3] == "10.0.0.2:6171"
    assert not r._is_non_distributed()
    with pytest.raises(RuntimeError, match="is a SERVER, not a trainer"):
        r._get_trainer_endpoint()


def test_ps_trainer_from_env(env):
    env(PADDLE_PSERVERS_IP_PORT_LIST=_SERVERS, PADDLE_TRAINERS_NUM=2, TRAINING_ROLE="TRAINER",
        PADDLE_TRAINER_ID=1, POD_IP="127.0.0.9", PADDLE_PORT=6001)
    r = PaddleCloudRoleMaker()
    assert r._is_worker() and not r._is_server() and not r._is_first_worker()
    assert r._worker_index() == 1 and r._worker_num() == 2 and r._server_num() == 3
    assert r._get_trainer_endpoint() == "127.0.0.9:6001"
    assert "role: 1, current_id: 1" in r.to_string()


def test_ps_without_servers_is_one_plain_worker(env):
    r = PaddleCloudRoleMaker(is_collective=False)
    assert r._is_non_distributed() and r._is_worker() and r._is_first_worker()
    assert (r._worker_num(), r._worker_index(), r._server_num()) == (1, 0, 0)


@pytest.mark.parametrize("kw,match", [
    (dict(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=0), "PADDLE_TRAINERS_NUM is not set"),
    (dict(PADDLE_TRAINERS_NUM=2, PADDLE_TRAINER_ID=0), "TRAINING_ROLE is not set"),
    (dict(PADDLE_TRAINERS_NUM="two", TRAINING_ROLE="TRAINER"),
     "PADDLE_TRAINERS_NUM='two' is not an integer"),
    (dict(PADDLE_TRAINERS_NUM=2, TRAINING_ROLE="WORKER"), "must be TRAINER or PSERVER, got "
                                                         "'WORKER'"),
    (dict(PADDLE_TRAINERS_NUM=2, TRAINING_ROLE="TRAINER"), "PADDLE_TRAINER_ID is not set"),
    (dict(PADDLE_TRAINERS_NUM=2, TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=2),
     r"PADDLE_TRAINER_ID=2 is not in \[0, PADDLE_TRAINERS_NUM=2\)"),
    (dict(PADDLE_TRAINERS_NUM=2, TRAINING_ROLE="PSERVER", POD_IP="127.0.0.1"),
     "a PSERVER needs PADDLE_PORT"),
    (dict(PADDLE_TRAINERS_NUM=2, TRAINING_ROLE="PSERVER", POD_IP="127.0.0.3", PADDLE_PORT=1),
     "127.0.0.3:1 is not in PADDLE_PSERVERS_IP_PORT_LIST"),
])
def test_ps_env_errors_name_the_variable(env, kw, match):
    env(PADDLE_PSERVERS_IP_PORT_LIST=_SERVERS, **kw)
    with pytest.raises(ValueError, match=match):
        PaddleCloudRoleMaker()._is_server()


def test_ps_env_bad_endpoint_and_heter(env):
    env(PADDLE_PSERVERS_IP_PORT_LIST="127.0.0.1", PADDLE_TRAINERS_NUM=1, TRAINING_ROLE="TRAINER")
    with pytest.raises(ValueError, match="'127.0.0.1' is not an 'ip:port' endpoint"):
        PaddleCloudRoleMaker()._worker_num()
    env(PADDLE_PSERVERS_IP_PORT_LIST=_SERVERS, TRAINING_ROLE="HETER_TRAINER")
    with pytest.raises(NotImplementedError, match="HETER_TRAINER"):
        PaddleCloudRoleMaker()._worker_num()


def test_collective_env(env):
    env(PADDLE_TRAINER_ID=2, PADDLE_CURRENT_ENDPOINT="10.0.0.2:6170",
        PADDLE_TRAINER_ENDPOINTS="10.0.0.1:6170,10.0.0.1:6171,10.0.0.2:6170")
    r = PaddleCloudRoleMaker(is_collective=True)
    assert r._is_worker() and r._worker_index() == 2 and r._worker_num() == 3
    assert r._node_num() == 2 and r._get_trainer_endpoint() == "10.0.0.2:6170"
    assert not r._is_non_distributed() and r._server_num() == 0
    env(PADDLE_TRAINER_ID=3)
    with pytest.raises(ValueError, match=r"PADDLE_TRAINER_ID=3 is not in \[0, 3\)"):
        PaddleCloudRoleMaker(is_collective=True)._worker_num()
    with pytest.raises(TypeError, match="is_collective must be a bool"):
        PaddleCloudRoleMaker(is_collective="yes")


def test_user_defined_role_maker():
    r = UserDefinedRoleMaker(current_id=1, role=Role.WORKER, worker_num=3,
                             server_endpoints=["127.0.0.1:36011", "127.0.0.1:36012"])
    assert r._is_worker() and r._worker_index() == 1 and r._worker_num() == 3
    assert r._server_num() == 2 and not r._is_first_worker()
    s = UserDefinedRoleMaker(current_id=1, role=Role.SERVER, worker_num=2,
                             server_endpoints=["127.0.0.1:36011", "127.0.0.1:36012"])
    assert s._is_server() and s._server_index() == 1
    c = UserDefinedRoleMaker(is_collective=True, current_id=0,
                             worker_endpoints=["127.0.0.1:1", "127.0.0.2:1"])
    assert c._worker_num() == 2 and c._node_num() == 2 and c._is_first_worker()
    with pytest.raises(ValueError, match="current_id=2 but there are only 2 server_endpoints"):
        UserDefinedRoleMaker(current_id=2, role=Role.SERVER, worker_num=1,
                             server_endpoints=["a:1", "b:1"])._is_server()
    with pytest.raises(ValueError, match="role must be Role.WORKER or Role.SERVER"):
        UserDefinedRoleMaker(current_id=0, role=7, worker_num=1)._is_server()
    with pytest.raises(ValueError, match="give worker_num or worker_endpoints"):
        UserDefinedRoleMaker(current_id=0, role=Role.SERVER, server_endpoints=["a:1"])._role_id()


@pytest.mark.parametrize("n_files,trainers,expected", [
    # Paddle's docstring examples, then an uneven case
    (5, 2, [["f0", "f1", "f2"], ["f3", "f4"]]),
    (2, 3, [["f0"], ["f1"], []]),
    (7, 3, [["f0", "f1", "f2"], ["f3", "f4"], ["f5", "f6"]]),
])
def test_get_file_shard_split(n_files, trainers, expected):
    files = [f"f{i}" for i in range(n_files)]
    got = []
    for tid in range(trainers):
        util = fleet.UtilBase()
        util._set_role_maker(UserDefinedRoleMaker(current_id=tid, role=Role.WORKER,
                                                  worker_num=trainers,
                                                  server_endpoints=["127.0.0.1:1"]))
        got.append(util.get_file_shard(files))
    assert got == expected
    with pytest.raises(TypeError, match="files must be a list"):
        util.get_file_shard("f0,f1")


def test_util_single_process_and_errors(env):
    fleet.init(is_collective=True)
    assert fleet.util.all_reduce([1, 2]).tolist() == [1, 2]
    assert fleet.util.all_gather(3.5) == [3.5]
    fleet.util.barrier()
    with pytest.raises(ValueError, match="mode must be one of"):
        fleet.util.all_reduce([1], mode="avg")
    with pytest.raises(ValueError, match="comm_world must be one of"):
        fleet.util.barrier("trainers")
    with pytest.raises(TypeError, match="input must be numbers"):
        fleet.util.all_reduce(["a"])
    with pytest.raises(ValueError, match="input must be one number"):
        fleet.util.all_gather([1, 2])


def test_fleet_init_ps_mode_keeps_the_role(env):
    env(PADDLE_PSERVERS_IP_PORT_LIST=_SERVERS, PADDLE_TRAINERS_NUM=2, TRAINING_ROLE="PSERVER",
        POD_IP="127.0.0.1", PADDLE_PORT=36001)
    try:
        fleet.init()   # is_collective=False: parameter-server mode from the environment
        assert fleet.is_server() and not fleet.is_worker() and fleet.server_index() == 0
        assert fleet.server_num() == 3 and fleet.worker_num() == 2
        assert fleet.server_endpoints(to_string=True) == _SERVERS
        assert isinstance(fleet.fleet, fleet.Fleet) and fleet.fleet._role_maker._is_server()
        assert not fleet.is_initialized()   # no hybrid groups in PS mode
        with pytest.raises(TypeError, match="role_maker must be a fleet role maker"):
            fleet.init(role_maker="PSERVER")
    finally:
        fleet.init(is_collective=True)


def test_role_makers_and_util_on_two_ranks():
    p = run_launcher("rolemaker_check.py", 2, timeout=120)
    assert p.returncode == 0, explain(p)
    got = rank_lines(p.reports, "ROLES")
    assert got == {0: "ok 19", 1: "ok 19"}, explain(p)
