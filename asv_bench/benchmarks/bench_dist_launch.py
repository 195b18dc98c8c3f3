"""fw.distributed.launch: launcher start-up to the first collective.

The workload: ``python -m fw.distributed.launch --nproc_per_node 4`` running a
script whose ranks call ``MPI.COMM_WORLD.Barrier()`` right after MPI init (the
PMI wire-up of 4 ranks, MPICH's shared-memory bootstrap, one barrier); rank 0
prints the wall-clock time after the barrier and the figure is that time minus
the moment the launcher process was started. It includes the launcher's own
interpreter start and ``import fw`` (the ``fw`` namespace package loads the
framework), the store, and 4 rank interpreters importing mpi4py.
Target: <= 3 s for 4 ranks on the 2-core reference machine.

``spawn_first_collective_2_ranks`` is the same for ``fw.distributed.spawn`` of a
module-level function (2 ranks), measured from inside the parent process.

Run as a script for the figures over a few rounds:
``python asv_bench/benchmarks/bench_dist_launch.py [rounds]``.
"""

import os
import subprocess
import sys
import tempfile
import time

BARRIER = ("import time\nfrom mpi4py import MPI\nMPI.COMM_WORLD.Barrier()\n"
           "if MPI.COMM_WORLD.Get_rank() == 0:\n"
           "    print('BARRIER_DONE', time.time(), flush=True)\n")

SPAWN = """
import sys, time
from fw.distributed.spawn import spawn

def work(path):
    from mpi4py import MPI
    MPI.COMM_WORLD.Barrier()
    if MPI.COMM_WORLD.Get_rank() == 0:
        open(path, "w").write(repr(time.time()))

if __name__ == "__main__":
    t0 = time.time()
    spawn(work, args=(sys.argv[1],), nprocs=2)
    print("SPAWN_T0", t0, flush=True)
"""


def _clean_env():
    from fw.distributed.launch.env import clean_environ

    return clean_environ()


def launch_first_collective(nproc=4, timeout=120.0):
    """Seconds from starting the launcher to rank 0 leaving its first Barrier."""
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "b.py")
        with open(script, "w") as f:
            f.write(BARRIER)
        t0 = time.time()
        res = subprocess.run([sys.executable, "-m", "fw.distributed.launch", "--nproc_per_node",
                              str(nproc), "--log_dir", os.path.join(d, "log"), script],
                             cwd=d, env=_clean_env(), capture_output=True, text=True,
                             timeout=timeout)
        if res.returncode != 0:
            raise RuntimeError(f"launch failed ({res.returncode}): {res.stderr[-2000:]}")
        return float(res.stdout.split("BARRIER_DONE")[1].split()[0]) - t0


def spawn_first_collective(timeout=120.0):
    """Seconds from the spawn() call to rank 0 leaving its first Barrier (2 ranks)."""
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "s.py")
        with open(script, "w") as f:
            f.write(SPAWN)
        mark = os.path.join(d, "t")
        res = subprocess.run([sys.executable, script, mark], cwd=d, env=_clean_env(),
                             capture_output=True, text=True, timeout=timeout)
        if res.returncode != 0:
            raise RuntimeError(f"spawn failed ({res.returncode}): {res.stderr[-2000:]}")
        t0 = float(res.stdout.split("SPAWN_T0")[1].split()[0])
        with open(mark) as f:
            return float(f.read()) - t0


class LaunchStartup:
    """Wall-clock seconds to the first collective (track_: one number per run)."""

    timeout = 300
    number = 1
    repeat = 1

    def track_launch_first_collective_4_ranks(self):
        return launch_first_collective(4)

    track_launch_first_collective_4_ranks.unit = "s"

    def track_spawn_first_collective_2_ranks(self):
        return spawn_first_collective()

    track_spawn_first_collective_2_ranks.unit = "s"


if __name__ == "__main__":
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    for name, fn in (("launch, 4 ranks", launch_first_collective),
                     ("spawn, 2 ranks", spawn_first_collective)):
        times = sorted(fn() for _ in range(rounds))
        print(f"{name}: start -> first collective: median {times[len(times) // 2]:.2f} s, "
              f"min {times[0]:.2f} s, max {times[-1]:.2f} s ({rounds} rounds)")
