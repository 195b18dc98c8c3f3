"""The rule table covers the op table: every differentiable op has a VJP rule,
and every rule names an op that exists."""

import fw
from fw.autograd.rules import RULES
from fw.core.ops import OPS

# ops differentiated by the static engine itself (they hold nested blocks)
CONTROL_FLOW = {"cond", "while"}


def test_every_differentiable_op_has_a_rule():
    missing = sorted(n for n, op in OPS.items()
                     if op.differentiable and n not in RULES and n not in CONTROL_FLOW)
    assert not missing, f"differentiable ops without a VJP rule: {missing}"


def test_rules_name_real_differentiable_ops():
    unknown = sorted(n for n in RULES if n not in OPS)
    assert not unknown, f"VJP rules for ops that do not exist: {unknown}"
    nondiff = sorted(n for n in RULES if not OPS[n].differentiable)
    assert not nondiff, f"VJP rules for ops marked non-differentiable: {nondiff}"


def test_non_differentiable_ops_are_not_recorded():
    x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
    assert fw.argmax(x)._node is None
    assert fw.floor_divide(x, 2.0).stop_gradient
