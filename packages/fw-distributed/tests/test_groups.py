"""Groups of a subset of ranks on 4 CPU ranks (comm_scripts/groups_check.py):
member order, global src/dst, non-members untouched, per-group timeouts, p2p and
objects inside a group, destroying a group."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from comm_testutil import explain, rank_lines, run_mpi  # noqa: E402


def test_groups_of_subsets_on_four_ranks():
    p = run_mpi("groups_check.py", 4, timeout=240)
    assert p.returncode == 0, explain(p)
    got = rank_lines(p.reports, "GROUPS")
    assert sorted(got) == [0, 1, 2, 3], explain(p)
    # ranks 0 and 2 also checked the src-outside-the-group error
    assert {r: int(v.split()[1]) for r, v in got.items()} == {0: 10, 1: 9, 2: 10, 3: 9}, got
