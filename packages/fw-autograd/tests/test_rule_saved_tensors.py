"""What a rule declares it saves (``@vjp(..., inputs=, outputs=)``) is all it keeps.

A rule that does not read its inputs declares ``inputs=False`` (and one that does
not read its outputs leaves ``outputs`` False): the node then neither holds those
tensors (they can be freed once the caller drops them) nor checks their versions,
so writing to them in place after the forward pass does not break the backward pass
(PyTorch's saved-tensor rule). For every such rule, on record samples, this bumps
the version of each input (and output) it does not save, checks that the dropped
inputs are freed, then runs the backward.
"""

import gc
import weakref

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fw
from fw.autograd._registry import Rule
from fw.autograd.rules import RULES
from fw.autograd.testing import GradCase
from fw.core.errors import FwError
from fw.core.internal import bump_version, version_of
from fw.core.testing import load_all

RECORDS = load_all()


def _lean(rule):
    return not rule.inputs or not rule.outputs


CASES = sorted(n for n, r in RULES.items() if _lean(r) and RECORDS.get(n))


@pytest.mark.parametrize("name", CASES)
def test_unsaved_tensors_may_be_written_after_the_forward(name):
    rule = RULES[name]
    rec = RECORDS[name][0]
    checked = []

    @settings(max_examples=3, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data):
        dtype = data.draw(st.sampled_from(rec.dtypes))
        case = GradCase(name, rec.sample(data.draw, dtype))
        if not case.pos:
            return
        # the differentiated inputs are copies (non-leaf) of the leaves we differentiate
        leaves = [fw.to_tensor(x, stop_gradient=False) for x in case.primals()]
        ins = [leaf * 1 for leaf in leaves]
        fw.seed(0)
        try:
            outs, ins = case.call(ins)
        except FwError:
            return
        outs = [o for o in outs if isinstance(o, fw.Tensor) and not o.stop_gradient
                and (o.dtype.is_floating_point or o.dtype.is_complex)]
        if not outs:
            return
        if not rule.inputs:
            for t in ins:
                bump_version(t)
            # and the node does not keep them alive (the graph holds the outputs)
            refs = [weakref.ref(t) for t in ins]
            del t, ins
            gc.collect(0)  # the youngest generation is enough (and fast)
            kept = [r() for r in refs if r() is not None]
            assert not kept, f"{name}: the graph keeps inputs its rule does not save"
            ins = []
        loss = sum(fw.sum(fw.real(o) if o.dtype.is_complex else o) for o in outs)
        if not rule.outputs:
            for o in outs:
                before = [version_of(t) for t in ins]
                bump_version(o)
                if rule.inputs and before != [version_of(t) for t in ins]:
                    return  # o is a view of an input: writing to it writes the input
        try:
            fw.grad([loss], leaves, allow_unused=True)  # raises if a bumped tensor was saved
        except FwError as e:
            if "modified by an in-place operation" in str(e) or "inputs=False" in str(e):
                raise  # a saved tensor was checked, or the rule reads what it did not save
            return  # a gradient the rule does not implement for this sample (svd, lu)
        checked.append(1)

    run()
    if not checked:
        pytest.skip("no record sample gives a differentiable output")


# rules that read their inputs only on a path the record samples do not take eagerly
READS_INPUTS_ELSEWHERE = {
    "reshape_dyn": "reads x's run-time shape only when several sizes are dynamic (IR)",
}
SAVING = sorted(n for n, r in RULES.items() if r.inputs and RECORDS.get(n)
                and n not in READS_INPUTS_ELSEWHERE)


@pytest.mark.parametrize("name", SAVING)
def test_a_rule_that_saves_its_inputs_reads_them(name):
    """The converse: registered again with ``inputs=False``, the rule fails on some
    record sample (first order or with create_graph) because it reads them. A rule
    that never does would keep its inputs alive for nothing."""
    rule = RULES[name]
    rec = RECORDS[name][0]
    seen = {"ran": 0, "read": 0}

    @settings(max_examples=3, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data(), create_graph=st.booleans())
    def run(data, create_graph):
        case = GradCase(name, rec.sample(data.draw, data.draw(st.sampled_from(rec.dtypes))))
        if not case.pos:
            return
        leaves = [fw.to_tensor(x, stop_gradient=False) for x in case.primals()]
        RULES[name] = Rule(name, rule.fn, False, rule.outputs)
        try:
            fw.seed(0)
            try:
                outs, _ = case.call(leaves)
            except FwError:
                return
            outs = [o for o in outs if isinstance(o, fw.Tensor) and not o.stop_gradient
                    and (o.dtype.is_floating_point or o.dtype.is_complex)]
            if not outs:
                return
            loss = sum(fw.sum(fw.real(o) if o.dtype.is_complex else o) for o in outs)
            try:
                fw.grad([loss], leaves, allow_unused=True, create_graph=create_graph)
            except FwError as e:
                if "registered with inputs=False" in str(e):
                    seen["read"] += 1
                return
            seen["ran"] += 1
        finally:
            RULES[name] = rule

    run()
    if not seen["ran"] and not seen["read"]:
        pytest.skip("no record sample reaches the backward")
    assert seen["read"], f"{name}: registered with inputs=True but never reads them"


def test_listed_rules_still_save_their_inputs():
    assert all(RULES[n].inputs for n in READS_INPUTS_ELSEWHERE)
