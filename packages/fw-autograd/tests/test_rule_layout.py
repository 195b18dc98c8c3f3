"""The VJP rules live by family: an op's rule is in fw/autograd/rules/<family>.py,
named like the op's module in fw-core's fw/core/ops/ (``OpDef.family``)."""

import ast
import importlib
from pathlib import Path

from fw.autograd.rules import FAMILIES, RULES
from fw.core.ops import FAMILIES as OP_FAMILIES
from fw.core.ops import OPS


def test_every_rule_lives_in_its_family_module():
    assert RULES
    wrong = {n: r.fn.__module__ for n, r in RULES.items()
             if r.fn.__module__ != f"fw.autograd.rules.{OPS[n].family}"}
    assert not wrong, wrong


def test_rule_modules_are_op_families_in_family_order():
    # each rules module is named like an op family, and FAMILIES loads them all
    modules = {r.fn.__module__.rsplit(".", 1)[1] for r in RULES.values()}
    assert set(FAMILIES) == modules
    for fam in FAMILIES:
        importlib.import_module(f"fw.autograd.rules.{fam}")
    # in the order of fw-core's op families
    assert list(FAMILIES) == sorted(FAMILIES, key=OP_FAMILIES.index)


def test_re_expressions_take_no_defaults():
    # a `composite` function (or one given to `vjp_of`) is called with every input and
    # attribute of its op: a default parameter value would never be read
    found, defaults = [], []
    for path in sorted((Path(importlib.import_module("fw.autograd.rules").__file__).parent)
                       .glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        used = {c.args[0].id for c in ast.walk(tree) if isinstance(c, ast.Call)
                and getattr(c.func, "id", None) == "vjp_of" and c.args
                and isinstance(c.args[0], ast.Name)}
        for fn in tree.body:
            if not isinstance(fn, ast.FunctionDef):
                continue
            if fn.name in used or any(isinstance(d, ast.Call) and
                                      getattr(d.func, "id", None) == "composite"
                                      for d in fn.decorator_list):
                found.append(fn.name)
                if fn.args.defaults or any(fn.args.kw_defaults):
                    defaults.append(f"{path.name}:{fn.name}")
    assert len(found) > 30  # the walk sees the re-expressions
    assert not defaults, defaults
