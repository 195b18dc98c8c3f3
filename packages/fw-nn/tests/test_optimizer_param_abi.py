"""The optimizer's parameter ABI other fw packages use (fw-distributed's ZeRO and
fleet optimizers, fw-slim's ASP): `get_parameter_list`, `get_param_groups`,
`set_param_groups` — copies out, validated replacement in, optimizer state of the
parameters that stay kept."""

import doctest

import numpy as np
import pytest

import fw
from fw.optimizer import optimizer as optimizer_module


def _params(*shapes):
    out = []
    for i, s in enumerate(shapes):
        p = fw.create_parameter(list(s), "float32")
        with fw.no_grad():
            p.set_value(np.full(s, float(i + 1), np.float32))
        out.append(p)
    return out


def _grads(ps, value=1.0):
    for p in ps:
        p.grad = fw.to_tensor(np.full(p.shape, value, np.float32))


def test_get_parameter_list_is_a_copy_in_order():
    a, b, c = _params([2], [3], [1])
    opt = fw.optimizer.SGD(0.1, parameters=[{"params": [a, b]}, {"params": [c]}])
    got = opt.get_parameter_list()
    assert [id(p) for p in got] == [id(a), id(b), id(c)]
    got.clear()                                   # a copy: the optimizer keeps its own
    assert len(opt.get_parameter_list()) == 3
    assert fw.optimizer.SGD(0.1).get_parameter_list() is None


def test_get_param_groups_copies_params_and_hyper_parameters():
    a, b = _params([2], [3])
    opt = fw.optimizer.Momentum(0.1, parameters=[{"params": [a]},
                                                 {"params": [b], "learning_rate": 0.5}])
    groups = opt.get_param_groups()
    assert [[id(p) for p in g["params"]] for g in groups] == [[id(a)], [id(b)]]
    assert groups[1]["learning_rate"] == 0.5 and "learning_rate" not in groups[0]
    groups[1]["params"].append(a)
    groups[1]["learning_rate"] = 9.0
    again = opt.get_param_groups()
    assert len(again[1]["params"]) == 1 and again[1]["learning_rate"] == 0.5


def test_set_param_groups_narrows_and_keeps_state():
    a, b = _params([2], [3])
    opt = fw.optimizer.Adam(0.1, parameters=[a, b])
    _grads([a, b])
    opt.step()                                    # moments exist for a and b
    opt.set_param_groups([dict(g, params=[a]) for g in opt.get_param_groups()])
    assert [id(p) for p in opt.get_parameter_list()] == [id(a)]
    b_before = b.numpy().copy()
    a_before = a.numpy().copy()
    _grads([a, b], 3.0)    # another gradient: the step then depends on the kept moments
    opt.step()
    np.testing.assert_array_equal(b.numpy(), b_before)      # no longer optimized
    assert not np.array_equal(a.numpy(), a_before)
    state = opt.state_dict()
    assert f"{a.name}_moment1_0" in state and f"{b.name}_moment1_0" not in state
    # the same as an Adam that never lost b: a's second step uses the kept moments
    ref = _params([2])[0]
    ref_opt = fw.optimizer.Adam(0.1, parameters=[ref])
    for g in (1.0, 3.0):
        _grads([ref], g)
        ref_opt.step()
    np.testing.assert_allclose(a.numpy(), ref.numpy(), rtol=1e-6)


def test_set_param_groups_checks_and_leaves_the_old_groups_on_error():
    a, b = _params([2], [3])
    opt = fw.optimizer.SGD(0.1, parameters=[a, b])
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.set_param_groups([{"params": [a]}, {"params": [a]}])
    assert [id(p) for p in opt.get_parameter_list()] == [id(a), id(b)]
    with pytest.raises(TypeError, match="SGD.set_param_groups: groups must be a list"):
        opt.set_param_groups({"params": [a]})
    with pytest.raises(ValueError, match="needs 'params'"):
        opt.set_param_groups([{"learning_rate": 0.1}])
    assert len(opt.get_param_groups()) == 1


@pytest.mark.parametrize("name", ["get_parameter_list", "get_param_groups",
                                  "set_param_groups"])
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files: never into the checkout
    fn = getattr(optimizer_module.Optimizer, name)
    tests = doctest.DocTestFinder().find(fn, name, globs={})
    assert tests and tests[0].examples
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for t in tests:
        runner.run(t)
    assert runner.failures == 0
