"""kill -9 during fw.save and fw.jit.save at random points (issue 10, "Keep it so"): the
target always holds one whole version (loadable, checksum OK) and the next save leaves
no temporary file behind. The work is in tests/_kill_during_save.py (one process that
imports fw once and forks a writer per kill); see docs/reliability.md."""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and SIGKILL")
def test_kill_9_during_saves_leaves_the_target_whole_and_no_temporary(tmp_path):
    r = subprocess.run([sys.executable, os.path.join(HERE, "_kill_during_save.py"),
                        str(tmp_path), "16", "8", "0"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    figures = json.loads(r.stdout.strip().splitlines()[-1])
    assert figures["save"]["kills"] + figures["jit_save"]["kills"] >= 20
