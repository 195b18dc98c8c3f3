"""Running mutants: plant each in the scratch copy, run its tests, record the outcome.

Outcomes: ``killed`` (a test failed, or the mutant broke an import), ``timeout``
(the tests ran past the limit: counted as killed, as a hang is caught), ``survived``
(every selected test passed), ``uncovered`` (no test executes the line: a survivor
that was not run), ``equivalent`` (listed in ci/mutation/equivalent.toml: not run,
not counted), ``error`` (pytest could not run the selection: not counted, reported).
"""

from __future__ import annotations

import contextlib
import json
import queue
import random
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from . import covmap, equivalent
from .areas import ALL_TESTS, AREAS, ROOT, area_of
from .mutants import Mutant, apply, enumerate_mutants, mutant_key
from .runner import kill_all, run_tests
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
    run = [r for r in results if r["status"] in ("killed", "timeout", "survived")]
    count["mean_seconds"] = round(sum(r["seconds"] for r in run) / len(run), 2) if run else None
    cpu = [r["cpu_seconds"] for r in run if "cpu_seconds" in r]
    count["mean_cpu_seconds"] = round(sum(cpu) / len(cpu), 2) if cpu else None
    return count


_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)


def run(mutants: list[Mutant], *, jobs: int = 1, log: Callable[[str], None] = print,
        rebuild_maps: bool = False, on_result: Callable[[dict], None] | None = None) -> list[dict]:
    """Run each mutant, `jobs` at a time (one scratch copy each); the result records,
    in the order of `mutants`."""
    if jobs < 1:
        raise ValueError("--jobs must be at least 1")
    if not mutants:
        return []
    equivalents = equivalent.load()
    results: list[dict | None] = [None] * len(mutants)
    todo: queue.Queue[int] = queue.Queue()
    for i in range(len(mutants)):
        todo.put(i)
    lock = threading.Lock()
    stop = threading.Event()
    done = [0]
    with contextlib.ExitStack() as stack:
        scratches = [stack.enter_context(Scratch()) for _ in range(min(jobs, len(mutants)) or 1)]
        for s in scratches:
            s.verify()
        maps: dict[str, covmap.TestMap] = {}
        for d in sorted({d for m in mutants for d in test_dirs_for(m.file)}):
            maps[d] = covmap.load(scratches[0], d, rebuild=rebuild_maps, log=log)

        def worker(scratch: Scratch) -> None:
            while not stop.is_set():
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    return
                rec = _one(scratch, mutants[i], maps, equivalents)
                if stop.is_set():
                    return
                with lock:
                    results[i] = rec
                    done[0] += 1
                    log(f"[{done[0]}/{len(mutants)}] {rec['status']:10} {mutants[i].where} "
                        f"{mutants[i].operator} ({rec['tests']} tests, {rec['seconds']:.1f} s)")
                    if on_result is not None:
                        on_result(rec)

        threads = [threading.Thread(target=worker, args=(s,), daemon=True) for s in scratches]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(timeout=1.0)
        except BaseException:
            stop.set()
            kill_all()
            for t in threads:
                t.join(timeout=30.0)
            raise
    return [r for r in results if r is not None]


def _one(scratch: Scratch, mutant: Mutant, maps: dict[str, covmap.TestMap],
         equivalents: dict) -> dict:
    source = scratch.original(mutant.file)
    applied = apply(mutant, source=source)
    rec = {**mutant.as_dict(), "key": applied.key, "old": applied.old_line,
           "new": applied.new_line, "diff": applied.diff, "tests": 0, "how": "",
           "seconds": 0.0, "killer": ""}
    if applied.key in equivalents:
        rec.update(status="equivalent", reason=equivalents[applied.key].reason)
        return rec
    file_maps = [maps[d] for d in test_dirs_for(mutant.file)]
    tests, how = covmap.select(file_maps, mutant.file, mutant.line, source)
    rec.update(tests=len(tests), how=how)
    if not tests:
        rec["status"] = "uncovered"
        return rec
    limit = max(TIMEOUT_MIN,
                TIMEOUT_FACTOR * covmap.expected_seconds(file_maps, tests) + TIMEOUT_PAD)
    scratch.write(mutant.file, applied.code)
    try:
        tr = run_tests(scratch, tests, limit)
    finally:
        scratch.restore(mutant.file)
    rec["seconds"] = round(tr.seconds, 2)
    rec["cpu_seconds"] = round(tr.cpu_seconds, 2)
    rec["status"] = {"failed": "killed", "passed": "survived",
                     "timeout": "timeout"}.get(tr.status, "error")
    found = _FAILED.search(tr.output)
    rec["killer"] = found.group(1) if found else ""
    if rec["status"] == "error":
        rec["output"] = tr.output[-2000:]
    return rec


def load_results(path: Path) -> dict:
    """A results document; records written before mutants had a scope get it (and
    their key) from today's sources, matched by operator and occurrence."""
    doc = json.loads(path.read_text())
    old = [r for r in doc["results"] if "scope" not in r]
    for file in sorted({r["file"] for r in old}):
        if not (ROOT / file).is_file():
            continue
        source = (ROOT / file).read_text(encoding="utf-8")
        found = {(m.operator, m.occurrence): m for m in enumerate_mutants(file, source=source)}
        for r in old:
            m = found.get((r["operator"], r["occurrence"])) if r["file"] == file else None
            if m is not None and m.line == r["line"]:
                r["scope"] = m.scope
                r["key"] = mutant_key(file, m.scope, r["old"], r["operator"], r["new"])
    return doc


def survivors_of(doc: dict) -> list[tuple[int, Mutant]]:
    """The survivors (and uncovered mutants) of a results document, found again in
    today's sources by identity (`Applied.key`; among mutants sharing it, the one
    nearest the recorded line): (index in ``doc["results"]``, mutant) pairs."""
    want = [(i, r) for i, r in enumerate(doc["results"]) if r["status"] in SURVIVED]
    out: list[tuple[int, Mutant]] = []
    for file in sorted({r["file"] for _, r in want}):
        if not (ROOT / file).is_file():
            continue
        source = (ROOT / file).read_text(encoding="utf-8")
        lines = source.splitlines()
        mine = [(i, r) for i, r in want if r["file"] == file]
        olds = {(r["operator"], r["old"]) for _, r in mine}
        by_key: dict[str, list[Mutant]] = {}
        for m in enumerate_mutants(file, source=source):
            if (m.operator, lines[m.line - 1].strip()) in olds:
                by_key.setdefault(apply(m, source=source).key, []).append(m)
        for i, r in mine:
            candidates = by_key.get(r["key"], [])
            if candidates:
                best = min(candidates, key=lambda m: abs(m.line - r["line"]))
                candidates.remove(best)
                out.append((i, best))
    return out


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
