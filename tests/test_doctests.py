"""fw's docstrings: every example runs, and every public name is documented.

The inventory of public names is ci/gen_doc_allowlist.py's (derived from the package
tree's ``__all__``s). Each distinct docstring with a ``>>>`` example is one test, named
by the public name that owns it (``-k fw.nn.functional`` runs that module's examples).
The docs contract (docs/guide/writing_docs.md): doctest with ELLIPSIS and
NORMALIZE_WHITESPACE, a fresh namespace per docstring, ``fw.seed(0)`` and NumPy's and
Python's global seeds set before it, a temporary working directory; global state an
example changes (default dtype, static mode, device, print options, flags, grad mode)
is put back after it, so the tests are order-independent (pytest-xdist safe).

``test_public_names_documented`` fails for a public name whose docstring lacks a
section (Args / Returns / Examples) unless docs/undocumented.txt lists it; an
allowlisted name that is documented now is only reported (regenerate the list with
``python ci/gen_doc_allowlist.py``), so parallel branches merge without conflicts.
"""

from __future__ import annotations

import doctest
import importlib.util
import inspect
import pathlib
import random
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("fw_ci_doc_allowlist",
                                               ROOT / "ci" / "gen_doc_allowlist.py")
inv = importlib.util.module_from_spec(_spec)
sys.modules.setdefault(_spec.name, inv)  # dataclasses look their module up there
_spec.loader.exec_module(inv)

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# examples that build full-size networks (DenseNet-264, Inception-v3: 2-8 s each on a
# loaded 2-core machine) or calibrate a cost model (~3 s of timing each) run in CI's slow
# step, so that the default run stays well under a minute
SLOW_PREFIXES = ("fw.vision.models.", "fw.distributed.auto.calibrate",
                 "fw.distributed.auto.load_profile", "fw.distributed.auto.Cluster.this_machine")


def _source(entry) -> tuple[str | None, int | None]:
    target = entry.obj.fget if isinstance(entry.obj, property) else entry.obj
    try:
        file = inspect.getsourcefile(target)
        _, line = inspect.getsourcelines(target)
    except (TypeError, OSError):
        return None, None
    return file, line


class _LegacyChecker(doctest.OutputChecker):
    """Pre-contract examples often state their result in a comment, not as output:
    an example with no expected output passes when it runs without an exception."""

    def check_output(self, want, got, optionflags):
        return not want or super().check_output(want, got, optionflags)


def _defining_module(entry):
    target = entry.obj.fget if isinstance(entry.obj, property) else entry.obj
    if entry.kind == "module":
        return entry.obj
    return sys.modules.get(getattr(target, "__module__", None) or "fw") or sys.modules["fw"]


def _doctest_cases():
    """(test id, entry) per distinct docstring that has examples, in name order. A
    Tensor method that shares its function's text runs once, under the function."""
    seen = set()
    out = []
    for e in inv.inventory():
        doc = e.doc
        if ">>>" not in doc or doc in seen:
            continue
        seen.add(doc)
        slow = e.name.startswith(SLOW_PREFIXES)
        out.append(pytest.param(e, id=e.name, marks=[pytest.mark.slow] if slow else []))
    return out


@pytest.fixture
def doc_env(tmp_path, monkeypatch):
    """The docs contract's fresh start, and the global state put back afterwards."""
    import fw
    from fw.core import misc as _misc
    from fw.core import tensor as _tensor

    monkeypatch.chdir(tmp_path)
    dtype, device = fw.get_default_dtype(), fw.get_device()
    printopts, np_printopts = dict(_tensor._PRINT), np.get_printoptions()
    flags = dict(_misc._FLAGS)
    grad = fw.is_grad_enabled()
    fw.seed(0)
    np.random.seed(0)
    random.seed(0)
    yield
    if not fw.in_dynamic_mode():
        fw.disable_static()
    fw.set_default_dtype(dtype)
    fw.set_device(device)
    _tensor._PRINT.clear()
    _tensor._PRINT.update(printopts)
    np.set_printoptions(**np_printopts)
    changed = {k: flags.get(k, False) for k, v in _misc._FLAGS.items() if flags.get(k) != v}
    if changed:
        fw.set_flags(changed)
    _misc._FLAGS.clear()
    _misc._FLAGS.update(flags)
    fw.autograd.set_grad_enabled(grad)


@pytest.mark.parametrize("entry", _doctest_cases())
def test_docstring_examples(entry, doc_env):
    file, line = _source(entry)
    checker = None
    if inv.contract_example(entry.doc):
        globs = {"__name__": "__doctest__"}
    else:
        checker = _LegacyChecker()
        # an example written before the contract (no ``import fw`` first; the allowlist
        # lists its name): run as ``python -m doctest`` would, in its module's globals,
        # with the ``fw`` and ``np`` such examples take for granted
        import fw

        module = _defining_module(entry)
        own = vars(module) if module is not fw else {}  # fw shadows float, any, ...
        globs = {**own, "fw": fw, "np": np}
    test = doctest.DocTestParser().get_doctest(entry.doc, globs, entry.name, file, line)
    report: list[str] = []
    runner = doctest.DocTestRunner(checker=checker, optionflags=FLAGS, verbose=False)
    try:
        result = runner.run(test, out=report.append, clear_globs=True)
    finally:
        test.globs.clear()
    assert result.attempted > 0
    if result.failed:
        pytest.fail(f"{entry.name}: {result.failed} of {result.attempted} examples failed\n"
                    + "".join(report), pytrace=False)


def test_public_names_documented():
    allow = inv.read_allowlist()
    undocumented = {e.name: inv.missing(e) for e in inv.inventory() if inv.missing(e)}
    new = sorted(n for n in undocumented if n not in allow)
    done = sorted(n for n in allow if n not in undocumented)
    if done:
        # not a failure: another branch may document them; the integrator regenerates
        print(f"{len(done)} names in docs/undocumented.txt are documented now (or gone); "
              "run python ci/gen_doc_allowlist.py:\n  " + "\n  ".join(done))
    assert not new, (
        f"{len(new)} public names lack docstring sections (docs/guide/writing_docs.md); "
        "document them (or, for a name that truly cannot be documented yet, regenerate "
        "docs/undocumented.txt with python ci/gen_doc_allowlist.py):\n"
        + "\n".join(f"  {n}: lacks {', '.join(undocumented[n])}" for n in new))


def test_inventory_derives_the_public_api():
    """The inventory reaches the modules and names the brief lists, under canonical
    names, and finds nothing of fw-core's internals."""
    names = {e.name: e for e in inv.inventory()}
    modules = {e.name for e in names.values() if e.kind == "module"}
    for m in ("fw", "fw.nn", "fw.nn.functional", "fw.nn.initializer", "fw.linalg", "fw.fft",
              "fw.signal", "fw.optimizer", "fw.optimizer.lr", "fw.io", "fw.metric", "fw.amp",
              "fw.autograd", "fw.jit", "fw.static", "fw.profiler", "fw.utils", "fw.device"):
        assert m in modules, m
    assert not any(m.startswith("fw.core") for m in modules)
    # one object, one canonical name; the other names are its aliases
    assert "fw.matmul" in names and "fw.Tensor.matmul" in names["fw.matmul"].aliases
    assert "fw.linalg.matmul" not in names
    assert names["fw.nn.functional.conv2d"].aliases == sorted(
        names["fw.nn.functional.conv2d"].aliases, key=lambda a: a != "fw.nn.functional.conv2d")
    assert "fw.conv2d" not in names
    assert "fw.nn.Linear" in names and "fw.nn.Layer.parameters" in names
    assert "fw.Tensor.shape" in names or "fw.Tensor.shape" in {
        a for e in names.values() for a in e.aliases}


def test_missing_sections_detected():
    """The completeness check reads the sections the contract asks for."""

    def f(x, name=None):
        """Summary.

        Args:
            x (Tensor): input.
            name (str, optional): unused. Default: None.

        Returns:
            Tensor, x.

        Examples:
            >>> import fw
        """

    def g(x):
        """Summary only."""

    def h():
        """No arguments.

        Returns:
            None.

        Examples:
            >>> import fw
        """

    f.__module__ = g.__module__ = h.__module__ = "fw"
    mk = lambda fn: inv.Entry(f"fw.{fn.__name__}", "fw", fn, "function")  # noqa: E731
    assert inv.missing(mk(f)) == []
    assert inv.missing(mk(g)) == ["Args", "Returns", "Examples"]
    assert inv.missing(mk(h)) == []
    g.__doc__ = None
    assert inv.missing(mk(g)) == ["docstring"]


def test_allowlist_format_and_counts():
    """The committed allowlist is grouped by module with correct per-module counts and
    lists no name twice."""
    text = (ROOT / "docs" / "undocumented.txt").read_text()
    group, count, expected, counts, seen = None, 0, 0, {}, set()
    for line in text.splitlines():
        if line.startswith("# fw") and line.endswith(")"):
            if group:
                counts[group] = (count, expected)
            group, count = line[2:].split(" (")[0], 0
            expected = int(line.rsplit("(", 1)[1][:-1])
        elif line and not line.startswith("#"):
            assert line not in seen, f"{line} listed twice"
            seen.add(line)
            assert line == group or line.startswith(group + "."), (line, group)
            count += 1
    if group:
        counts[group] = (count, expected)
    for g, (n, want) in counts.items():
        assert n == want, f"{g}: {n} names listed, header says {want}"
