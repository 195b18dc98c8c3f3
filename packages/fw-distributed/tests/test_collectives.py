"""Every collective x reduce op x dtype on 2 and 3 CPU ranks (mpiexec), against
NumPy references computed from every rank's input (comm_scripts/collectives_check.py:
inputs and shapes are drawn from seeded generators, so each rank knows every
rank's input). One multi-rank run checks hundreds of cases."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from comm_testutil import explain, rank_lines, run_launcher, run_mpi  # noqa: E402


# 2 ranks under fw's launcher (PMI and the store from the launcher), 3 and 4 ranks
# under plain mpiexec (rank 0 hosts the store): both bring-ups, and an odd world size.
# The 4-rank check once timed out at 240 s on the 2-core CI machine and was skipped
# there; the time went into the exit, not the checks: ranks polling the store while
# rank 0 (its host) sat in MPI_Finalize holding the GIL. With the exit rendezvous
# fixed (test_exit.py) it takes ~11 s at load 11 (6 runs), 252 s with the old exit.
@pytest.mark.parametrize("nranks,seed,launcher", [
    (2, 0, "fw"), (3, 1, "mpiexec"), (4, 2, "mpiexec")])
def test_every_collective_against_numpy(nranks, seed, launcher):
    run = run_launcher if launcher == "fw" else run_mpi
    p = run("collectives_check.py", nranks, seed, timeout=240)
    assert p.returncode == 0, explain(p)
    checks = rank_lines(p.reports, "CHECKS")
    assert sorted(checks) == list(range(nranks)), explain(p)
    # every rank checked at least all_reduce/reduce/broadcast/all_gather/... cases
    assert all(int(c) > 300 for c in checks.values()), checks
