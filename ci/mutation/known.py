"""The catalogue of known bugs (ci/mutation/known/*.toml) and its checker.

Each entry is a realistic bug, written by hand as an exact text replacement, and
the tests that must catch it (format: ci/mutation/known/README.md). The checker
(``hatch run mutate --known``) proves each entry in the scratch copy: its tests
pass on the real code and fail with the bug planted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import tomllib

from .areas import ROOT
from .runner import run_tests
from .scratch import Scratch

KNOWN_DIR = ROOT / "ci" / "mutation" / "known"
_REQUIRED = ("id", "bug", "file", "old", "new", "tests")
TIMEOUT = 600.0  # seconds per test run of one entry


@dataclass
class Entry:
    id: str
    bug: str
    file: str
    old: str
    new: str
    tests: list[str]
    source: str = ""  # the catalogue file it came from
    problems: list[str] = field(default_factory=list)  # why it is malformed


def parse(text: str, source: str) -> list[Entry]:
    """The entries of one catalogue file; an entry's format errors go to `problems`
    (a file that is not TOML raises ValueError)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{source}: not valid TOML: {e}") from None
    out = []
    for i, raw in enumerate(data.get("mutant", []), 1):
        problems = [f"lacks `{k}`" for k in _REQUIRED if k not in raw]
        unknown = sorted(set(raw) - set(_REQUIRED))
        if unknown:
            problems.append(f"unknown fields {unknown}")
        tests = raw.get("tests", [])
        if not isinstance(tests, list) or not tests or not all(isinstance(t, str) for t in tests):
            problems.append("`tests` must be a non-empty list of pytest node ids")
            tests = []
        e = Entry(id=str(raw.get("id", f"#{i}")), bug=str(raw.get("bug", "")),
                  file=str(raw.get("file", "")), old=str(raw.get("old", "")),
                  new=str(raw.get("new", "")), tests=tests, source=source, problems=problems)
        out.append(e)
    if not out and "mutant" not in data:
        raise ValueError(f"{source}: no [[mutant]] entries")
    return out


def validate(entry: Entry, root: Path = ROOT) -> list[str]:
    """Everything wrong with `entry` against the tree at `root` (empty: fine)."""
    problems = list(entry.problems)
    path = root / entry.file
    if not entry.file or not path.is_file():
        problems.append(f"file {entry.file!r} does not exist")
    else:
        n = path.read_text(encoding="utf-8").count(entry.old) if entry.old else 0
        if n == 0:
            problems.append("`old` text not found in the file")
        elif n > 1:
            problems.append(f"`old` text occurs {n} times in the file (must be exactly once)")
    if entry.old == entry.new:
        problems.append("`new` is the same as `old`")
    for t in entry.tests:
        test_file = t.split("::", 1)[0]
        if not (root / test_file).is_file():
            problems.append(f"test file {test_file!r} does not exist")
    return problems


def load(paths: list[Path] | None = None) -> list[Entry]:
    """Every entry of the catalogue files (default: all of ci/mutation/known/*.toml);
    ids must be unique across them."""
    files = sorted(KNOWN_DIR.glob("*.toml")) if paths is None else paths
    entries: list[Entry] = []
    for p in files:
        entries.extend(parse(p.read_text(encoding="utf-8"), p.name))
    seen: dict[str, str] = {}
    for e in entries:
        if e.id in seen:
            e.problems.append(f"id {e.id!r} is also used in {seen[e.id]}")
        seen.setdefault(e.id, e.source)
    return entries


@dataclass
class Outcome:
    entry: Entry
    status: str  # "killed" | "survived" | "malformed" | "fails-unmutated" | "error"
    seconds: float
    detail: str


def check(entries: list[Entry], *, log=print) -> list[Outcome]:
    """Prove each entry in a scratch copy: its tests pass unmutated, fail mutated."""
    out: list[Outcome] = []
    good: list[Entry] = []
    for e in entries:
        problems = validate(e)
        if problems:
            out.append(Outcome(e, "malformed", 0.0, "; ".join(problems)))
        else:
            good.append(e)
    if not good:
        return out
    with Scratch() as scratch:
        scratch.verify()
        # one unmutated run of every entry's tests; per entry only if that fails
        union = sorted({t for e in good for t in e.tests})
        base = run_tests(scratch, union, TIMEOUT, stop_first=False)
        base_ok = dict.fromkeys((e.id for e in good), base.status == "passed")
        if base.status != "passed":
            for e in good:
                base_ok[e.id] = run_tests(scratch, e.tests, TIMEOUT).status == "passed"
        for e in good:
            if not base_ok[e.id]:
                out.append(Outcome(e, "fails-unmutated", 0.0,
                                   "its tests fail on the unmutated code"))
                continue
            original = scratch.original(e.file)
            scratch.write(e.file, original.replace(e.old, e.new, 1))
            try:
                tr = run_tests(scratch, e.tests, TIMEOUT)
            finally:
                scratch.restore(e.file)
            status = {"failed": "killed", "timeout": "killed", "passed": "survived"}.get(
                tr.status, "error")
            detail = {"survived": "all its tests pass with the bug planted",
                      "error": tr.output[-800:]}.get(status, tr.status)
            out.append(Outcome(e, status, tr.seconds, detail))
            log(f"  {status:9} {e.source}:{e.id} ({tr.seconds:.1f} s)")
    order = {id(e): i for i, e in enumerate(entries)}
    return sorted(out, key=lambda o: order[id(o.entry)])


def table(outcomes: list[Outcome]) -> str:
    rows = [("result", "catalogue", "id", "seconds", "detail")]
    for o in outcomes:
        rows.append((o.status, o.entry.source, o.entry.id, f"{o.seconds:.1f}",
                     o.detail if o.status != "killed" else o.entry.bug))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4]
                     for r in rows)
