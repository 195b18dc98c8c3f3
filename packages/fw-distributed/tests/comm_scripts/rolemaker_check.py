"""Run on 2 ranks under fw's launcher: fleet's role makers and fleet.util over
real collectives. Collective mode reads the launcher's PADDLE_* variables;
parameter-server mode is staged with rank 0 a server and rank 1 a trainer, whose
comm worlds are groups given through role_maker._set_comm_world (what the PS
runtime does). Prints ``ROLES <rank> ok <checks>``."""
import os

from _emit import emit

import fw.distributed as dist
from fw.distributed import fleet

# -- fleet.init() without servers in the environment is a collective job too
fleet.init()
assert fleet.worker_num() == 2 and fleet.fleet._role_maker._is_collective
# -- collective mode, from the launcher's environment
fleet.init(is_collective=True)
R = fleet.worker_index()
assert fleet.worker_num() == 2 and R == int(os.environ["PADDLE_TRAINER_ID"])
assert fleet.worker_endpoints() == os.environ["PADDLE_TRAINER_ENDPOINTS"].split(",")
assert fleet.worker_endpoints(to_string=True) == os.environ["PADDLE_TRAINER_ENDPOINTS"]
assert fleet.is_worker() and not fleet.is_server() and fleet.server_num() == 0
assert fleet.is_first_worker() == (R == 0)
assert fleet.util.all_reduce([R + 1, 10 * R], "sum").tolist() == [3, 10]
assert fleet.util.all_reduce(R + 0.5, "max").tolist() == 1.5
assert fleet.util.all_reduce((R, -R), mode="min").tolist() == [0, -1]
assert fleet.util.all_gather(7 * R + 1) == [1, 8]
assert fleet.all_reduce([R]).tolist() == [1]
fleet.util.barrier()
fleet.barrier_worker()
files = [f"part-{i}" for i in range(5)]
shard = fleet.util.get_file_shard(files)
assert shard == (files[:3] if R == 0 else files[3:]), shard
checks = 11

# -- parameter-server mode: rank 0 a server, rank 1 a trainer (staged environment)
os.environ.update({"PADDLE_PSERVERS_IP_PORT_LIST": "127.0.0.1:36001",
                   "PADDLE_TRAINERS_NUM": "1", "POD_IP": "127.0.0.1",
                   "PADDLE_PORT": "36001" if R == 0 else "36101",
                   "TRAINING_ROLE": "PSERVER" if R == 0 else "TRAINER",
                   "PADDLE_TRAINER_ID": "0"})
role = fleet.PaddleCloudRoleMaker(is_collective=False)
fleet.init(role)
assert fleet.is_server() == (R == 0) and fleet.is_worker() == (R == 1)
assert fleet.server_num() == 1 and fleet.worker_num() == 1
assert fleet.server_endpoints() == ["127.0.0.1:36001"]
try:
    fleet.util.all_gather(R, "all")
    raise AssertionError("no comm world was set")
except RuntimeError as e:
    assert "'all' group is made by the parameter-server runtime" in str(e), e
world = dist.get_group(0)
servers = dist.new_group([0])
workers = dist.new_group([1])
role._set_comm_world("all", world)
role._set_comm_world("server" if R == 0 else "worker", servers if R == 0 else workers)
assert fleet.util.all_gather(100 + R, "all") == [100, 101]
mine = "server" if R == 0 else "worker"
assert fleet.util.all_reduce([R + 2], "sum", mine).tolist() == [R + 2]
fleet.util.barrier("all")
if R == 1:
    assert fleet.util.get_file_shard(files) == files  # the only trainer reads them all
    assert fleet.server_index.__name__ == "server_index"
else:
    assert fleet.server_index() == 0
checks += 8
emit("ROLES", R, f"ok {checks}")
