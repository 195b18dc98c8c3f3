"""Which tests to run for a mutant: a coverage map built once per test directory.

The map of a test directory (``packages/fw-nn/tests``, ...) is one pytest run of
it in the unmutated scratch copy under coverage.py, each test in its own dynamic
context (`covplugin`). It is cached under ``.mutation/covmap/`` and rebuilt when
stale: its key hashes every source file under ``packages/*/src`` (line numbers
move when they change) and the test directory's files.

For a mutant on line L of file F, the tests are those that passed unmutated and
executed L. A module-level assignment (a table) runs once, at import,
inside whichever test imported the module first: the tests of the statements
reading the names it binds are its tests. A line run only at import (a ``def``
line's defaults, a module-level table no statement of the module reads, code
generated at import) has no test of its own: the tests of the enclosing
function's body stand in, else those of the whole module, else every test
(`select`). A line no test runs, not even at import: the mutant is *uncovered*.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import subprocess
import sys
import time
from functools import lru_cache
from pathlib import Path

from coverage import CoverageData

from .areas import ROOT
from .scratch import Scratch

CACHE = ROOT / ".mutation" / "covmap"
BUILD_TIMEOUT = 3600.0  # seconds; a map build of a test directory takes minutes


def _digest(root: Path, patterns: list[str]) -> str:
    h = hashlib.sha1()
    for pattern in patterns:
        for p in sorted(root.glob(pattern)):
            if p.is_file() and "__pycache__" not in p.parts:
                h.update(p.relative_to(root).as_posix().encode())
                h.update(p.read_bytes())
    return h.hexdigest()


def map_key(testdir: str, root: Path = ROOT) -> str:
    return _digest(root, ["packages/*/src/**/*.py", f"{testdir}/**/*", "conftest.py",
                          "pyproject.toml"])


class TestMap:
    """The coverage map of one test directory."""

    def __init__(self, data_file: Path, meta: dict):
        self.data_file = data_file
        self.meta = meta
        self.prefix = meta["scratch_root"] + os.sep
        self.tests: dict[str, dict] = meta["tests"]
        self._data = CoverageData(basename=str(data_file))
        self._data.read()
        self._files = {f[len(self.prefix):]: f for f in self._data.measured_files()
                       if f.startswith(self.prefix)}

    @lru_cache(maxsize=256)  # noqa: B019 (a map lives for the whole run)
    def lines(self, rel: str) -> dict[int, frozenset[str]]:
        """line -> the passing tests that executed it (import-time runs left out)."""
        full = self._files.get(rel)
        if full is None:
            return {}
        out: dict[int, frozenset[str]] = {}
        for line, contexts in self._data.contexts_by_lineno(full).items():
            ok = frozenset(c for c in contexts if c and self.tests.get(c, {}).get("outcome")
                           == "passed")
            if ok:
                out[line] = ok
        return out

    @lru_cache(maxsize=256)  # noqa: B019
    def import_lines(self, rel: str) -> frozenset[int]:
        """Lines run while importing or collecting (the empty context): module-level
        code, and functions that only run at import (fw-core's op code generation)."""
        full = self._files.get(rel)
        if full is None:
            return frozenset()
        return frozenset(ln for ln, contexts in self._data.contexts_by_lineno(full).items()
                         if "" in contexts)

    def passing(self) -> frozenset[str]:
        return frozenset(t for t, r in self.tests.items() if r.get("outcome") == "passed")

    def duration(self, nodeid: str) -> float:
        return self.tests.get(nodeid, {}).get("duration", 1.0)


def build(scratch: Scratch, testdir: str, *, log=print) -> TestMap:
    """Run `testdir`'s tests under coverage in the (unmutated) copy and cache the map."""
    CACHE.mkdir(parents=True, exist_ok=True)
    slug = testdir.strip("/").replace("/", "_")
    data_file = CACHE / f"{slug}.coverage"
    for stale in (data_file, Path(f"{data_file}.tests.json"), CACHE / f"{slug}.json"):
        stale.unlink(missing_ok=True)
    key = map_key(testdir, scratch.origin)
    env = scratch.env()
    env["FWMUT_COV_DATA"] = str(data_file)
    env["FWMUT_COV_INCLUDE"] = str(scratch.root / "packages" / "*" / "src" / "*")
    cmd = ["nice", "-n", "10", sys.executable, "-m", "pytest", "-q", "--no-header",
           "-p", "_fwmut_covplugin", "-p", "no:randomly", testdir]
    log(f"mutate: building the coverage map of {testdir} (cached in {CACHE.relative_to(ROOT)})")
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=scratch.root, env=env, capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT)
    seconds = time.monotonic() - start
    tests_file = Path(f"{data_file}.tests.json")
    if not data_file.exists() or not tests_file.exists():
        raise RuntimeError(f"coverage map of {testdir} was not written (pytest exit "
                           f"{proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    tests = json.loads(tests_file.read_text())
    failed = sorted(t for t, r in tests.items() if r["outcome"] == "failed")
    meta = {"key": key, "testdir": testdir, "scratch_root": str(scratch.root),
            "seconds": round(seconds, 1), "tests": tests, "failed_unmutated": failed}
    (CACHE / f"{slug}.json").write_text(json.dumps(meta))
    log(f"mutate: map of {testdir}: {len(tests)} tests in {seconds:.0f} s"
        + (f"; {len(failed)} fail unmutated and are not used: {failed[:5]}" if failed else ""))
    return TestMap(data_file, meta)


def load(scratch: Scratch, testdir: str, *, rebuild: bool = False, log=print) -> TestMap:
    """The map of `testdir`, from the cache when current, else built now."""
    slug = testdir.strip("/").replace("/", "_")
    meta_file, data_file = CACHE / f"{slug}.json", CACHE / f"{slug}.coverage"
    if not rebuild and meta_file.exists() and data_file.exists():
        meta = json.loads(meta_file.read_text())
        if meta.get("key") == map_key(testdir, scratch.origin):
            return TestMap(data_file, meta)
    return build(scratch, testdir, log=log)


@lru_cache(maxsize=256)
def _scopes(source: str) -> list[tuple[int, int, int]]:
    """(def line, first body line, last line) of every function, innermost last."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((node.lineno, node.body[0].lineno, node.end_lineno or node.lineno))
    return sorted(out, key=lambda s: s[2] - s[0], reverse=True)


def _statement_start(source: str, line: int) -> int:
    """The first line of the innermost statement spanning `line` (coverage reports a
    multi-line statement, like a class attribute's tuple, on its first line only)."""
    best = None
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or (node.end_lineno or node.lineno) - node.lineno < \
                    (best.end_lineno or best.lineno) - best.lineno:
                best = node
    return line if best is None else best.lineno


@lru_cache(maxsize=256)
def _top_bindings(source: str) -> tuple[dict[int, frozenset[str]], dict[str, frozenset[int]]]:
    """(first line of each module-level assignment -> the names it binds,
    name -> the first lines of the statements that read it)."""
    tree = ast.parse(source)
    binds: dict[int, frozenset[str]] = {}

    def top(body):
        for node in body:
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
                if names:
                    binds[node.lineno] = frozenset(names)
            elif isinstance(node, (ast.If, ast.Try)):  # tables defined under a guard
                top(node.body)
                top(node.orelse)

    top(tree.body)
    reads: dict[str, set[int]] = {}
    for stmt in ast.walk(tree):
        if not isinstance(stmt, ast.stmt):
            continue
        todo = [c for c in ast.iter_child_nodes(stmt) if not isinstance(c, ast.stmt)]
        while todo:  # the statement's own expressions, not those of nested statements
            node = todo.pop()
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                reads.setdefault(node.id, set()).add(stmt.lineno)
            todo.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.stmt))
    return binds, {k: frozenset(v) for k, v in reads.items()}


def _reader_lines(source: str, stmt: int) -> frozenset[int]:
    """The statements reading a name that the module-level assignment starting
    at line `stmt` binds (empty when `stmt` is no such assignment or nothing reads it)."""
    try:
        binds, reads = _top_bindings(source)
    except SyntaxError:
        return frozenset()
    names = binds.get(stmt, frozenset())
    return frozenset().union(*(reads.get(n, frozenset()) for n in names)) - {stmt}


def select(maps: list[TestMap], rel: str, line: int, source: str) -> tuple[list[str], str]:
    """The tests for a mutant at `rel`:`line`, cheapest first, and how they were found:

    - "readers": for an assignment at module level (a table), the tests that
      execute the statements reading the names it binds, with the line's own (which
      only says which test imported the module first);
    - "line": the tests that execute the line (or, for a continuation line, the
      statement it belongs to: coverage reports a statement on its first line);
    - "function": for a ``def`` line (its defaults), those that execute the function's
      body, with the line's own; else, for a line coverage does not report (a
      continuation line of a statement), those that execute the enclosing function;
    - "module": else, for a line run at import, those that execute any line of the
      module (a module-level table is read by the module's functions);
    - "import": else, for a line run at import, every test (code that only runs at
      import, such as fw-core's generated op functions, is used by all of them);
    - "none": no test runs the line at all (uncovered).
    """
    covered: dict[int, frozenset[str]] = {}
    imported: set[int] = set()
    for m in maps:
        for ln, tests in m.lines(rel).items():
            covered[ln] = covered.get(ln, frozenset()) | tests
        imported |= m.import_lines(rel)
    stmt = _statement_start(source, line)  # a continuation line: its statement's tests
    readers = _reader_lines(source, stmt)
    if readers:
        # a module-level binding (a table such as layout's TO_NHWC) runs once,
        # at import, inside whichever test imported the module first: that test says
        # nothing about the value. The tests that run the lines reading the name do.
        chosen = frozenset().union(covered.get(line, frozenset()), covered.get(stmt, frozenset()),
                                   *(covered.get(ln, frozenset()) for ln in readers))
        if chosen:
            return _cheapest(maps, chosen), "readers"
    header = [sc for sc in _scopes(source) if sc[0] <= line < sc[1]]
    if header:
        # a def line (its defaults) runs where the function is defined: at import,
        # inside whichever test imported the module first; the function's own tests
        # are those that run its body
        start, body, end = header[-1]
        chosen = frozenset().union(covered.get(line, frozenset()), *(
            t for ln, t in covered.items() if body <= ln <= end))
        if chosen:
            return _cheapest(maps, chosen), "function"
    if covered.get(line):
        return _cheapest(maps, covered[line]), "line"
    if stmt != line and covered.get(stmt):
        return _cheapest(maps, covered[stmt]), "line"
    inner = [s for s in _scopes(source) if s[0] <= line <= s[2]]
    span = range(line, line + 1)  # where "does it run at import" is asked
    if inner:
        start, body, end = inner[-1]
        whole = range(start, end + 1)
        chosen = frozenset().union(*(t for ln, t in covered.items() if ln in whole))
        if chosen:
            return _cheapest(maps, chosen), "function"
        # the signature runs at every import; a body only when the function is called
        span = range(start, body) if line < body else range(body, end + 1)
    if not any(ln in imported for ln in span) and stmt not in imported:
        return [], "none"
    chosen = frozenset().union(*covered.values()) if covered else frozenset()
    if chosen:
        return _cheapest(maps, chosen), "module"
    everything = frozenset().union(*(m.passing() for m in maps))
    return _cheapest(maps, everything), ("import" if everything else "none")


def _cheapest(maps: list[TestMap], tests: frozenset[str]) -> list[str]:
    def cost(t):
        return min(m.duration(t) for m in maps if t in m.tests)

    return sorted(tests, key=lambda t: (cost(t), t))


def expected_seconds(maps: list[TestMap], tests: list[str]) -> float:
    total = 0.0
    for t in tests:
        total += min((m.duration(t) for m in maps if t in m.tests), default=1.0)
    return total
