"""Every loader (fw.load, fw.jit.load, fw.core.ir.load, fw.inference) on hypothesis-drawn,
structure-aware mutations of files fw wrote: no crash, no hang, no exception but fw's own
errors, and no silent wrong load of a checkpoint (issue 10, "Loaders are fuzzed").

A fixed, derandomized budget (so never flaky); ``hatch run fuzz`` runs a longer one. The
machinery is ci/fuzz.py; docs/reliability.md has the figures of the last long run."""

import importlib.util
import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = 120  # per (loader, seed file): 5 pairs, about 10 s on 2 cores


def _fuzz_module():
    spec = importlib.util.spec_from_file_location("fw_ci_fuzz", os.path.join(ROOT, "ci",
                                                                             "fuzz.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="memory cap needs Linux")
def test_loaders_survive_structure_aware_mutations(tmp_path):
    fuzz = _fuzz_module()
    worker = fuzz.Worker()
    try:
        c = fuzz.Campaign(str(tmp_path), worker)
        c.run(EXAMPLES, derandomize=True)
    finally:
        worker.close()
    rep = c.report(0)
    assert not c.failures, json.dumps({"report": rep, "failures": c.failures[:10]}, indent=1)
    assert rep["attempts"] == 5 * EXAMPLES
    # the mutations reach past the first checks: some mutated files still load
    assert all(rep["outcomes"][loader].get("ok", 0) > 0 for loader in fuzz.LOADERS)


def test_the_harness_reports_crashes_and_hangs(tmp_path):
    fuzz = _fuzz_module()
    worker = fuzz.Worker(timeout_s=1)
    try:
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        # the worker's own open() of a FIFO blocks: what a hang looks like
        assert worker.ask("open", str(fifo))["kind"] == "hang"
        assert worker.ask("crash", str(fifo))["kind"] == "crash"
        assert worker.ask("nope", str(fifo))["kind"] == "uncaught"
    finally:
        worker.close()
