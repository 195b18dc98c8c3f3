"""Run on N ranks under plain mpiexec (rank 0 hosts the job's store in a thread):
a few collectives, then rank 0 leaves last (after `delay` s) and the others first.
Rank 0 enters MPI_Finalize (which holds the GIL, freezing its store thread) as soon
as it sees every rank at the exit; a rank still polling the store then must not
block. Prints ``EXIT <rank> <time.time() when leaving>``."""
import sys
import time

from _emit import emit

import fw
import fw.distributed as dist

delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
dist.init_parallel_env(timeout=60)
R = dist.get_rank()
x = fw.ones([256])
for _ in range(5):
    dist.all_reduce(x)
assert float(x.numpy()[0]) == dist.get_world_size() ** 5
if R == 0:
    time.sleep(delay)
emit("EXIT", R, f"{time.time():.3f}")
