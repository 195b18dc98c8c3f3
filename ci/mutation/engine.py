"""Running mutants: plant each in the scratch copy, run its tests, record the outcome.

Outcomes: ``killed`` (a test failed, or the mutant broke an import), ``timeout``
(the tests ran past the limit: counted as killed, as a hang is caught), ``survived``
(every selected test passed), ``uncovered`` (no test executes the line: a survivor
that was not run), ``equivalent`` (listed in ci/mutation/equivalent.toml: not run,
not counted), ``error`` (pytest could not run the selection: not counted, reported).
"""

from __future__ import annotations

import random
import re
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from . import covmap, equivalent
from .areas import ALL_TESTS, AREAS, ROOT, area_of
from .mutants import Mutant, apply, enumerate_mutants
from .runner import run_tests
from .scratch import Scratch

RESULTS = ROOT / ".mutation" / "results"
KILLED = ("killed", "timeout")
SURVIVED = ("survived", "uncovered")
TIMEOUT_FACTOR, TIMEOUT_PAD, TIMEOUT_MIN = 3.0, 30.0, 60.0


def test_dirs_for(file: str) -> tuple[str, ...]:
    area = area_of(file)
    return area.tests if area is not None else ALL_TESTS


def all_mutants(files: Iterable[str], root: Path = ROOT) -> list[Mutant]:
    return [m for f in files for m in enumerate_mutants(f, root)]


def sample(mutants: list[Mutant], n: int | None, seed: int) -> list[Mutant]:
    """`n` mutants drawn uniformly (without replacement) by `seed`, in file order."""
    if n is None or n >= len(mutants):
        return list(mutants)
    if n <= 0:
        raise ValueError("--sample must be positive")
    chosen = random.Random(seed).sample(range(len(mutants)), n)
    return [mutants[i] for i in sorted(chosen)]


def score(results: list[dict]) -> dict:
    count = {k: sum(r["status"] == k for r in results)
             for k in ("killed", "timeout", "survived", "uncovered", "equivalent", "error")}
    killed = count["killed"] + count["timeout"]
    judged = killed + count["survived"] + count["uncovered"]
    count["score"] = round(100.0 * killed / judged, 1) if judged else None
    run = [r["seconds"] for r in results if r["status"] in ("killed", "timeout", "survived")]
    count["mean_seconds"] = round(sum(run) / len(run), 2) if run else None
    return count


_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)


def run(mutants: list[Mutant], *, log: Callable[[str], None] = print,
        rebuild_maps: bool = False, on_result: Callable[[dict], None] | None = None) -> list[dict]:
    """Run each mutant in one scratch copy; the result records, in order."""
    equivalents = equivalent.load()
    results: list[dict] = []
    with Scratch() as scratch:
        scratch.verify()
        maps: dict[str, covmap.TestMap] = {}
        for d in sorted({d for m in mutants for d in test_dirs_for(m.file)}):
            maps[d] = covmap.load(scratch, d, rebuild=rebuild_maps, log=log)
        for i, mutant in enumerate(mutants, 1):
            source = scratch.original(mutant.file)
            applied = apply(mutant, source=source)
            rec = {**mutant.as_dict(), "key": applied.key, "old": applied.old_line,
                   "new": applied.new_line, "diff": applied.diff, "tests": 0, "how": "",
                   "seconds": 0.0, "killer": ""}
            if applied.key in equivalents:
                rec.update(status="equivalent", reason=equivalents[applied.key].reason)
            else:
                file_maps = [maps[d] for d in test_dirs_for(mutant.file)]
                tests, how = covmap.select(file_maps, mutant.file, mutant.line, source)
                rec.update(tests=len(tests), how=how)
                if not tests:
                    rec["status"] = "uncovered"
                else:
                    limit = max(TIMEOUT_MIN, TIMEOUT_FACTOR
                                * covmap.expected_seconds(file_maps, tests) + TIMEOUT_PAD)
                    scratch.write(mutant.file, applied.code)
                    try:
                        tr = run_tests(scratch, tests, limit)
                    finally:
                        scratch.restore(mutant.file)
                    rec["seconds"] = round(tr.seconds, 2)
                    rec["status"] = {"failed": "killed", "passed": "survived",
                                     "timeout": "timeout"}.get(tr.status, "error")
                    found = _FAILED.search(tr.output)
                    rec["killer"] = found.group(1) if found else ""
                    if rec["status"] == "error":
                        rec["output"] = tr.output[-2000:]
            results.append(rec)
            log(f"[{i}/{len(mutants)}] {rec['status']:10} {mutant.where} {mutant.operator} "
                f"({rec['tests']} tests, {rec['seconds']:.1f} s)")
            if on_result is not None:
                on_result(rec)
    return results


def commit_of(root: Path = ROOT) -> str:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                          text=True, timeout=30).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                           capture_output=True, text=True, timeout=30).stdout.strip()
    return head + ("+dirty" if dirty else "")


def area_files(name: str) -> list[str]:
    return AREAS[name].files()


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
