"""Mutation testing's own tests (ci/mutate.py, ci/mutation/): the known-bug checker,
the operators, sampling and test selection; and a fixed sample of the known-bug
catalogue, run through the same code path as ``hatch run mutate --known``."""

from __future__ import annotations

import hashlib
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "ci"))

from mutation import covmap, equivalent, known  # noqa: E402
from mutation.engine import sample, score  # noqa: E402
from mutation.mutants import Mutant, apply, enumerate_mutants  # noqa: E402

ENTRY = '''
[[mutant]]
id = "x"
bug = "a bug"
file = "pkg/mod.py"
old = """{old}"""
new = "y = 2"
tests = ["tests/test_mod.py::test_y"]
'''


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\ny = 1\ny = 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text("def test_y(): pass\n")
    return tmp_path


def _problems(text, root):
    (entry,) = known.parse(text, "t.toml")
    return known.validate(entry, root)


def test_checker_accepts_an_entry_whose_old_text_occurs_once(tree):
    assert _problems(ENTRY.format(old="x = 1"), tree) == []


@pytest.mark.parametrize("old, message", [("z = 3", "not found"),
                                          ("y = 1", "occurs 2 times"),
                                          ("", "not found")])
def test_checker_rejects_old_text_missing_or_not_unique(tree, old, message):
    problems = _problems(ENTRY.format(old=old), tree)
    assert any(message in p for p in problems), problems


def test_checker_rejects_missing_fields_bad_tests_and_unknown_fields(tree):
    text = '[[mutant]]\nid = "a"\nfile = "pkg/mod.py"\nold = "x = 1"\nnew = "x = 2"\n' \
           'tests = []\ncolour = "red"\n'
    problems = " | ".join(_problems(text, tree))
    assert "lacks `bug`" in problems and "non-empty list" in problems
    assert "unknown fields ['colour']" in problems
    missing = ENTRY.format(old="x = 1").replace("tests/test_mod.py", "tests/nope.py")
    assert any("tests/nope.py" in p for p in _problems(missing, tree))
    other_file = ENTRY.format(old="x = 1").replace("pkg/mod.py", "pkg/gone.py")
    assert any("does not exist" in p for p in _problems(other_file, tree))


def test_checker_rejects_duplicate_ids_and_files_that_are_not_toml(tmp_path):
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(ENTRY.format(old="x = 1"))
    b.write_text(ENTRY.format(old="x = 1"))
    entries = known.load([a, b])
    assert entries[0].problems == [] and "also used in a.toml" in entries[1].problems[0]
    b.write_text("[[mutant]\n")
    with pytest.raises(ValueError, match="not valid TOML"):
        known.load([b])


def test_equivalent_entries_need_a_reason(tmp_path):
    p = tmp_path / "eq.toml"
    p.write_text('[[equivalent]]\nfile = "f.py"\nscope = ""\nold = "a < 4"\noperator = "X"\n'
                 'new = "a <= 4"\n')
    with pytest.raises(ValueError, match="lacks reason"):
        equivalent.load(p)
    p.write_text(p.read_text() + 'reason = "4 cannot occur"\n')
    (e,) = equivalent.load(p).values()
    assert e.reason == "4 cannot occur"


SOURCE = '''\
def f(a, b, eps=0):
    """Docstring 1 + 2."""
    if a < b and b:
        raise ValueError(f"bad {a + 1}")
    warnings.warn(f"slow {a - 1}")
    x: int = 3
    y = a * b + 2 - eps  # pragma: no mutate
    return -a + b * 2
'''


def _mutated_lines(source):
    out = set()
    for m in enumerate_mutants("m.py", source=source):
        a = apply(m, source=source)
        out.add((m.line, m.operator, a.new_line))
    return out


def test_operators_plant_realistic_bugs_and_skip_messages_and_pragmas():
    got = _mutated_lines(SOURCE)
    lines = {line for line, _, _ in got}
    assert lines == {1, 3, 8}  # raise/warn messages, annotated constants, pragma lines skipped
    assert (1, "NumberOffByOne", "def f(a, b, eps=1):") in got
    assert (3, "ReplaceComparisonOperator_Lt_LtE", "if a <= b and b:") in got
    assert (3, "AddNot", "if not a < b and b:") in got
    assert (3, "ReplaceAndWithOr", "if a < b or b:") in got
    assert (8, "ReplaceUnaryOperator_Delete_USub", "return a + b * 2") in got
    assert (8, "DropTerm", "return -a") in got
    assert (8, "DropTerm", "return -a + b") in got
    assert (8, "NumberOffByOne", "return -a + b * 1") in got
    assert (8, "ReplaceBinaryOperator_Mul_Div", "return -a + b / 2") in got


def test_number_mutants_are_off_by_one():
    got = {new for _, op, new in _mutated_lines("x = [0, 1, 8, 0.5]\n") if op == "NumberOffByOne"}
    assert got == {"x = [1, 1, 8, 0.5]", "x = [0, 0, 8, 0.5]", "x = [0, 1, 7, 0.5]",
                   "x = [0, 1, 8, 1.5]"}


def _applied(source):
    return [apply(m, source=source) for m in enumerate_mutants("m.py", source=source)]


def test_mutant_identity_ignores_line_numbers_but_not_the_function():
    (a,), (b,) = _applied("x = 1\n"), _applied("\n\nx = 1\n")
    assert a.key == b.key and a.mutant.line != b.mutant.line
    c, d = _applied("class A:\n    def f(self):\n        x = 1\n\ndef g():\n    x = 1\n")
    assert (c.mutant.scope, d.mutant.scope) == ("A.f", "g")
    assert c.key != d.key and c.new_line == d.new_line


def test_sampling_is_uniform_reproducible_and_bounded():
    ms = [Mutant("f.py", i, "Op", i) for i in range(100)]
    a, b = sample(ms, 10, seed=1), sample(ms, 10, seed=1)
    assert a == b and len(set(a)) == 10 and a == sorted(a, key=lambda m: m.line)
    assert sample(ms, 10, seed=2) != a
    assert sample(ms, 500, seed=1) == ms
    with pytest.raises(ValueError):
        sample(ms, 0, seed=1)


def test_score_counts_timeouts_as_killed_and_leaves_out_equivalent_and_errors():
    rs = [{"status": s, "seconds": 1.0} for s in
          ("killed", "timeout", "survived", "uncovered", "equivalent", "error")]
    s = score(rs)
    assert s["score"] == 50.0 and s["equivalent"] == 1 and s["error"] == 1


def _map(tmp_path, name, lines_by_context, outcomes):
    from coverage import CoverageData

    prefix = str(tmp_path / "tree")
    data = CoverageData(basename=str(tmp_path / name))
    for ctx, files in lines_by_context.items():
        data.set_context(ctx)
        data.add_lines({os.path.join(prefix, f): lines for f, lines in files.items()})
    data.write()
    tests = {t: {"outcome": o, "duration": d} for t, (o, d) in outcomes.items()}
    return covmap.TestMap(tmp_path / name, {"scratch_root": prefix, "tests": tests})


SELECT_SOURCE = ("import os\n\ndef f(a=1):\n    if a:\n        return 1\n    return 2\n\nT = 3\n\n"
                 "def g():\n    return 4\n\ndef h():\n    return 5\n")


def test_test_selection_by_line_then_function_then_module(tmp_path):
    m = _map(tmp_path, "cov", {"": {"m.py": [1, 3, 8, 10, 13, 14]},
                               "t.py::a": {"m.py": [4, 5]}, "t.py::b": {"m.py": [4, 5]},
                               "t.py::broken": {"m.py": [4, 6]}, "t.py::other": {"n.py": [1]}},
             {"t.py::a": ("passed", 2.0), "t.py::b": ("passed", 0.5),
              "t.py::broken": ("failed", 0.1), "t.py::other": ("passed", 0.2)})
    ab = ["t.py::b", "t.py::a"]
    # line 5: its own tests, cheapest first; the test failing unmutated is never used
    assert covmap.select([m], "m.py", 5, SELECT_SOURCE) == (ab, "line")
    # line 6 ran only in the failing test; line 3 (the def, run at import): the function's
    assert covmap.select([m], "m.py", 6, SELECT_SOURCE) == (ab, "function")
    assert covmap.select([m], "m.py", 3, SELECT_SOURCE) == (ab, "function")
    # a module-level line, and h() which only runs at import: the module's tests
    assert covmap.select([m], "m.py", 8, SELECT_SOURCE) == (ab, "module")
    assert covmap.select([m], "m.py", 14, SELECT_SOURCE) == (ab, "module")
    # g() never runs, not even at import: uncovered
    assert covmap.select([m], "m.py", 11, SELECT_SOURCE) == ([], "none")
    assert covmap.select([m], "other.py", 1, SELECT_SOURCE) == ([], "none")


CONT_SOURCE = ("T = (1,\n     2)\n\ndef f():\n    return max(1,\n               2)\n\n"
               "def g():\n    return 3\n")


def test_continuation_lines_take_their_statement_tests(tmp_path):
    # coverage reports a multi-line statement on its first line only: a mutant on a
    # later line of it is selected by that first line (not left "uncovered")
    m = _map(tmp_path, "cov3", {"": {"m.py": [1, 4, 8]}, "t.py::a": {"m.py": [5]},
                                "t.py::b": {"m.py": [9]}},
             {"t.py::a": ("passed", 1.0), "t.py::b": ("passed", 0.5)})
    assert covmap.select([m], "m.py", 6, CONT_SOURCE) == (["t.py::a"], "line")
    assert covmap.select([m], "m.py", 2, CONT_SOURCE) == (["t.py::b", "t.py::a"], "module")


def test_code_that_only_runs_at_import_is_tested_by_every_test(tmp_path):
    m = _map(tmp_path, "cov2", {"": {"m.py": [1, 3, 8, 13, 14]}, "t.py::a": {"n.py": [1]},
                                "t.py::b": {"n.py": [2]}},
             {"t.py::a": ("passed", 2.0), "t.py::b": ("passed", 0.5)})
    assert covmap.select([m], "m.py", 14, SELECT_SOURCE) == (["t.py::b", "t.py::a"], "import")
    assert covmap.select([m], "m.py", 11, SELECT_SOURCE) == ([], "none")


TABLE_SOURCE = ("PERM = (0, 2,\n        3, 1)\nUNREAD = 1\n\ndef f(x):\n    return x\n\n"
                "def g(x):\n    return [x[i] for i in PERM]\n")


def test_a_module_level_table_is_tested_by_the_statements_reading_it(tmp_path):
    # the table's lines ran inside t.py::importer (the test that imported the module
    # first), which never reads it; t.py::reader runs g, the only reader of PERM
    m = _map(tmp_path, "cov4", {"t.py::importer": {"m.py": [1, 3, 5, 8]},
                                "t.py::f": {"m.py": [6]}, "t.py::reader": {"m.py": [9]}},
             {"t.py::importer": ("passed", 0.1), "t.py::f": ("passed", 0.2),
              "t.py::reader": ("passed", 3.0)})
    both = ["t.py::importer", "t.py::reader"]
    assert covmap.select([m], "m.py", 1, TABLE_SOURCE) == (both, "readers")
    assert covmap.select([m], "m.py", 2, TABLE_SOURCE) == (both, "readers")  # continuation
    # a module-level name nothing reads keeps the old rule: the line's own tests
    assert covmap.select([m], "m.py", 3, TABLE_SOURCE) == (["t.py::importer"], "line")


DEF_SOURCE = "def f(x, tx=False):\n    return x\n\ndef g():\n    return f(1)\n"


def test_a_def_line_is_tested_by_the_tests_of_the_function_body(tmp_path):
    # the def line (its defaults) ran inside t.py::importer; t.py::user runs the body
    m = _map(tmp_path, "cov5", {"t.py::importer": {"m.py": [1, 4]},
                                "t.py::user": {"m.py": [2, 5]}},
             {"t.py::importer": ("passed", 0.1), "t.py::user": ("passed", 1.0)})
    assert covmap.select([m], "m.py", 1, DEF_SOURCE) == (["t.py::importer", "t.py::user"],
                                                         "function")


def _digest(rel):
    with open(os.path.join(ROOT, rel), "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()


def test_example_catalogue_is_caught_and_a_harmless_change_survives():
    entries = known.load([known.KNOWN_DIR / "examples.toml"])
    assert len(entries) >= 2
    harmless = known.Entry(id="harmless", bug="renames a local variable", tests=entries[0].tests,
                           file="packages/fw-nn/src/fw/nn/clip.py",
                           old="        total = sums[0]\n        for s in sums[1:]:\n"
                               "            total = total + s.astype(total.dtype)\n"
                               "        return fw.sqrt(total)",
                           new="        t = sums[0]\n        for s in sums[1:]:\n"
                               "            t = t + s.astype(t.dtype)\n"
                               "        return fw.sqrt(t)", source="test")
    before = {e.file: _digest(e.file) for e in entries + [harmless]}
    outcomes = {o.entry.id: o for o in known.check(entries + [harmless], log=lambda s: None)}
    for e in entries:
        assert outcomes[e.id].status == "killed", (
            f"known bug {e.id!r} ({e.bug}) survived its tests {e.tests}: "
            f"{outcomes[e.id].detail}")
    assert outcomes["harmless"].status == "survived"
    # planted in the scratch copy only: the working tree is as it was
    assert {f: _digest(f) for f in before} == before


@pytest.mark.slow
def test_a_fixed_sample_of_the_known_bug_catalogue_is_caught():
    """The first entry of each catalogue file other than the examples (at most 5 files,
    in name order): each must still be caught by its tests."""
    files = sorted(p for p in known.KNOWN_DIR.glob("*.toml") if p.name != "examples.toml")[:5]
    if not files:
        pytest.skip("no catalogue files besides examples.toml yet")
    entries = [known.load([p])[0] for p in files]
    outcomes = known.check(entries, log=lambda s: None)
    bad = [f"{o.entry.source}:{o.entry.id} ({o.entry.bug}): {o.status}: {o.detail}"
           for o in outcomes if o.status != "killed"]
    assert not bad, "known bugs not caught:\n" + "\n".join(bad)


def test_runner_reports_pass_fail_and_kills_a_hang_at_the_timeout():
    from mutation.runner import run_tests
    from mutation.scratch import Scratch

    with Scratch() as s:
        (s.root / "test_fwmut_probe.py").write_text(
            "import time\n\ndef test_ok():\n    pass\n\ndef test_bad():\n    assert 0\n\n"
            "def test_hang():\n    time.sleep(120)\n")
        assert run_tests(s, ["test_fwmut_probe.py::test_ok"], 120).status == "passed"
        assert run_tests(s, ["test_fwmut_probe.py::test_bad"], 120).status == "failed"
        # a test module that no longer imports (the mutant broke it) is a failure
        (s.root / "test_fwmut_broken.py").write_text("raise ImportError('planted')\n\n"
                                                     "def test_x():\n    pass\n")
        broken = run_tests(s, ["test_fwmut_broken.py::test_x", "test_fwmut_probe.py::test_ok"],
                           120)
        assert broken.status == "failed", broken.output
        assert run_tests(s, ["test_fwmut_probe.py::test_gone"], 120).status == "error"
        hang = run_tests(s, ["test_fwmut_probe.py::test_hang"], 3)
        assert hang.status == "timeout" and hang.seconds < 60
        # Hypothesis does not shrink in a mutant's run (a failure is all it needs)
        (s.root / "test_fwmut_phases.py").write_text(
            "from hypothesis import settings\n\ndef test_phases():\n"
            "    assert 'shrink' not in str(settings.default.phases)\n"
            "    assert 'generate' in str(settings.default.phases)\n")
        assert run_tests(s, ["test_fwmut_phases.py::test_phases"], 120).status == "passed"


def test_a_terminated_run_removes_its_scratch_copy(tmp_path):
    import signal
    import subprocess
    import time

    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "ci", "mutate.py"), "--known",
                             "--known-file", str(known.KNOWN_DIR / "examples.toml")],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not list(tmp_path.glob("fw-mutate-*/tree")) and time.monotonic() < deadline:
            assert proc.poll() is None, "mutate --known ended before making its scratch copy"
            time.sleep(0.2)
        assert list(tmp_path.glob("fw-mutate-*")), "no scratch copy appeared"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) != 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not list(tmp_path.glob("fw-mutate-*"))


def test_drop_term_applies_at_every_operand_of_a_long_sum():
    got = {new for _, op, new in _mutated_lines("x = a + b - c * d / e\n") if op == "DropTerm"}
    assert got == {"x = a - c * d / e", "x = a + b", "x = a + b - c / e", "x = a + b - c * d"}


def _cli():
    import importlib.util

    spec = importlib.util.spec_from_file_location("fw_ci_mutate", os.path.join(ROOT, "ci",
                                                                                "mutate.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.main


def test_cli_counts_mutants_and_rejects_bad_input(capsys, tmp_path):
    main = _cli()
    assert main(["--list", "packages/fw-nn/src/fw/nn/clip.py"]) == 0
    assert "paths: 1 files," in capsys.readouterr().out
    assert main(["--known", "--known-file", str(tmp_path / "none.toml")]) == 1
    assert "no such catalogue file" in capsys.readouterr().err
    outside = tmp_path / "x.py"
    outside.write_text("x = 1\n")
    for argv in ([str(outside)], [], ["--area", "nope"]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 2


PREVIOUS_REPORT = """# Mutation testing report

| area | M | run (N of M) | killed | ... |
|---|---|---|---|---|
| nn | 3934 | 60 of 3934 | 53 | 0 | 5 | 0 | 2 | 0 | 91.4 % | – | 1.85 | 1.29 | 2.0 h | \
0.7 h |
| jit | | not run | | | | | | | – | – | | | | |

Runs (commit: the last one that changed `packages/`): nn at e57e154 on 2026-11-26T08:50 (seed 9191).

## nn: 1 survivors

- `packages/fw-nn/src/fw/optimizer/lr.py:613` NumberOffByOne: `a` → `b`

## Equivalent mutants (0)
"""


def test_report_carries_over_the_areas_without_results(monkeypatch, tmp_path):
    from mutation import report

    monkeypatch.setattr(report, "_results", lambda: {})
    monkeypatch.setattr(report, "NOTES", tmp_path / "none.md")
    text = report.render(PREVIOUS_REPORT)
    lines = text.splitlines()
    # nn's row, run and survivors come over as they were; jit was not run before either
    assert "| nn | 3934 | 60 of 3934 | 53 | 0 | 5 | 0 | 2 | 0 | 91.4 % | – | 1.85 | 1.29 | " \
           "2.0 h | 0.7 h |" in lines
    assert any(ln.startswith("| jit | | not run |") for ln in lines)
    assert "nn at e57e154 on 2026-11-26T08:50 (seed 9191)." in text
    assert "Carried over from the previous report (no results in this checkout): nn." in text
    i = lines.index("## nn: 1 survivors")
    assert lines[i + 2] == "- `packages/fw-nn/src/fw/optimizer/lr.py:613` NumberOffByOne: `a` → `b`"
    (tmp_path / "notes.md").write_text("A note on the runs.\n")
    monkeypatch.setattr(report, "NOTES", tmp_path / "notes.md")
    assert "\nA note on the runs.\n" in report.render(PREVIOUS_REPORT)


def test_every_entry_of_the_known_bug_catalogue_still_applies():
    # cheap and in every run: an entry whose `old` text a refactor changed would
    # silently stop planting its bug (only a sample of the catalogue runs in CI)
    bad = {e.id: known.validate(e) for e in known.load()}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, bad
