"""The VJP rules live by family: an op's rule is in fw/autograd/rules/<family>.py,
named like the op's module in fw-core's fw/core/ops/ (``OpDef.family``)."""

import importlib

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
