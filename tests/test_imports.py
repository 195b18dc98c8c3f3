"""What importing fw loads, and what it does to the process.

Each test runs a fresh interpreter (a module, once imported, stays in
``sys.modules``): ``import fw`` and a serving process (``fw.inference`` with a
predictor run) load fw-core only; fw-autograd attaches itself when the first
op records a gradient (or on an explicit autograd call), on every eager path;
a missing fw package is reported with the pip package that provides it;
``import fw`` leaves malloc alone unless asked.
"""

import json
import os
import platform
import subprocess
import sys
import textwrap

import pytest

# packages a serving process must never load (fw-autograd, fw-nn, fw-jit)
NOT_FOR_SERVING = ("fw.autograd", "fw.nn", "fw.jit", "fw.optimizer", "fw.static", "fw.io",
                   "fw.amp", "fw.hapi")

# prints the loaded fw packages as JSON: `print(LOADED)` at the end of a snippet
LOADED = "__import__('json').dumps(sorted({'.'.join(m.split('.')[:2]) for m in " \
         "__import__('sys').modules if m.startswith('fw.')}))"


def run_fresh(code: str, env: dict | None = None) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, env=dict(os.environ, **(env or {})), timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def loaded_after(code: str) -> set:
    return set(json.loads(run_fresh(textwrap.dedent(code) + f"\nprint({LOADED})").splitlines()[-1]))


def test_import_fw_loads_fw_core_only():
    loaded = loaded_after("import fw")
    assert "fw.core" in loaded
    assert not loaded & set(NOT_FOR_SERVING), loaded


def test_import_fw_inference_loads_no_training_package():
    loaded = loaded_after("import fw.inference")
    assert "fw.inference" in loaded
    assert not loaded & set(NOT_FOR_SERVING), loaded


# the HTTP front is an extra of fw-inference: only a serving process loads it
SERVING_EXTRA = ("starlette", "uvicorn")


def test_import_fw_inference_and_its_command_load_no_http_server():
    out = run_fresh("""
        import sys
        import fw.inference, fw.inference.serve
        print(sorted(m for m in sys.modules
                     if m.split(".")[0] in ("starlette", "uvicorn", "anyio", "h11")
                     or m == "fw.inference.serving"))
    """)
    assert out.split() == ["[]"]


def test_import_fw_inference_serving_loads_the_extra_and_no_training_package():
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    loaded = loaded_after(f"""
        import sys
        import fw.inference.serving
        assert all(m in sys.modules for m in {SERVING_EXTRA!r}), sys.modules.keys()
    """)
    assert "fw.inference" in loaded
    assert not loaded & set(NOT_FOR_SERVING), loaded


def test_a_predictor_run_loads_no_training_package():
    # the model is built and saved with fw-core alone, then served
    loaded = loaded_after("""
        import os, tempfile
        import numpy as np
        import fw, fw.inference
        from fw.core.ir import TensorType, save, trace
        from fw.core.ops import call

        rng = np.random.default_rng(0)
        w = fw.to_tensor(rng.standard_normal((4, 3)).astype("float32"))
        b = fw.to_tensor(rng.standard_normal(3).astype("float32"))
        for t, n in ((w, "fc.weight"), (b, "fc.bias")):
            t.name, t.persistable, t.trainable = n, True, True
        program = trace(lambda x: call("relu", call("linear", x, w, b)),
                        [TensorType([-1, 4], "float32")], ["x"])
        path = os.path.join(tempfile.mkdtemp(), "m.fwmodel")
        save(program, path)
        pred = fw.inference.create_predictor(fw.inference.Config(path))
        x = rng.standard_normal((2, 4)).astype("float32")
        (y,) = pred.run([x])
        want = np.maximum(x @ w.numpy() + b.numpy(), 0)
        assert np.allclose(np.asarray(y), want, atol=1e-5), (y, want)
        assert not fw.core._memory.TUNED  # serving leaves malloc alone
    """)
    assert "fw.inference" in loaded
    assert not loaded & set(NOT_FOR_SERVING), loaded


# ------------------------------------------------------------ autograd attaches lazily
# Each snippet makes x (values [1, 2, 3], requiring grad) in its own way and y from it
# with a different eager path; the check below needs dy/dx = 2x recorded on the tape.
ATTACH_PATHS = {
    "to_tensor(stop_gradient=False)": "x = fw.to_tensor([1., 2., 3.], stop_gradient=False)\n"
                                      "y = (x * x).sum()",
    "Tensor(stop_gradient=False)": "x = fw.Tensor(np.array([1., 2., 3.]), stop_gradient=False)\n"
                                   "y = (x * x).sum()",
    "stop_gradient setter": "x = fw.to_tensor([1., 2., 3.])\nx.stop_gradient = False\n"
                            "y = fw.sum(fw.square(x))",
    "requires_grad setter": "x = fw.to_tensor([1., 2., 3.])\nx.requires_grad = True\n"
                            "y = fw.sum(x * x)",
    # a tensor marked by fw-internal code (fw-nn's parameters set the slot): the
    # first op that records attaches autograd, on each eager lane
    "binary fast path": "x = fw.to_tensor([1., 2., 3.])\nx._sg = False\ny = (x * x).sum()",
    "unary fast path": "x = fw.to_tensor([1., 2., 3.])\nx._sg = False\n"
                       "y = (fw.exp(fw.log(x)) * x).sum()",
    "generated function": "x = fw.to_tensor([[1., 2., 3.]])\nx._sg = False\n"
                          "y = fw.matmul(x, x, transpose_y=True).sum()",
    "general dispatcher": "x = fw.to_tensor([1., 2., 3.])\nx._sg = False\n"
                          "c = fw.concat([x])\ny = (c * c).sum()",
}


@pytest.mark.parametrize("how", sorted(ATTACH_PATHS))
def test_gradients_are_recorded_without_importing_autograd(how):
    out = run_fresh("import sys\nimport numpy as np\nimport fw\n"
                    "assert 'fw.autograd' not in sys.modules\n" + ATTACH_PATHS[how] + """
assert 'fw.autograd' in sys.modules
assert not y.stop_gradient
y.backward()
print(x.grad.numpy().ravel().tolist())
""")
    assert json.loads(out.splitlines()[-1]) == [2.0, 4.0, 6.0]


def test_marking_a_tensor_defers_autograd_to_its_first_recorded_op():
    # a loaded model marks its parameters stop_gradient=False: serving must not pay for
    # autograd until an op actually records (the Predictor test above relies on it)
    out = run_fresh("""
        import sys, fw
        x = fw.to_tensor([1.0])
        x.stop_gradient = False
        marked = 'fw.autograd' in sys.modules
        with_grad = x * 2
        print(marked, 'fw.autograd' in sys.modules, with_grad.stop_gradient)
    """)
    assert out.split() == ["False", "True", "False"]


def test_ops_without_gradients_do_not_attach_autograd():
    loaded = loaded_after("""
        import fw
        x = fw.to_tensor([[1.0, 2.0], [3.0, 4.0]])
        y = fw.matmul(x, x).exp().sum() + fw.concat([x, x]).mean()
        x.stop_gradient = True
    """)
    assert "fw.autograd" not in loaded


def test_lazy_names_of_fw_attach_autograd():
    out = run_fresh("""
        import fw
        x = fw.to_tensor([3.0], stop_gradient=False)
        with fw.no_grad():
            y = x * x
        (g,) = fw.grad([x * x], [x])
        print(y.stop_gradient, g.numpy().tolist(), fw.is_grad_enabled())
    """)
    assert out.split() == ["True", "[6.0]", "True"]


def test_flags_set_before_autograd_attaches_take_effect():
    # FLAGS_check_nan_inf is fw-autograd's (anomaly mode): set before it is attached,
    # it applies when the first recorded op attaches it
    out = run_fresh("""
        import sys, fw
        fw.set_flags({"FLAGS_check_nan_inf": True})
        assert 'fw.autograd' not in sys.modules
        y = fw.to_tensor([1.0], stop_gradient=False) * 2
        print(fw.autograd.is_anomaly_enabled())
    """)
    assert out.split() == ["True"]


# ------------------------------------------------------------ missing packages
# Simulates an uninstalled fw package: after `import fw`, the directories that hold
# it are dropped from the fw namespace's __path__ (the editable installs of this
# repository keep each package in its own directory).
def without(package: str) -> str:
    return f"""
import os, sys
import fw
fw.__path__[:] = [p for p in fw.__path__ if not os.path.exists(os.path.join(p, {package!r}))]
assert fw.__path__, "fw-core shares a directory with fw.{package}: cannot simulate its absence"
sys.modules.pop("fw.{package}", None)
"""


def test_import_of_a_missing_package_names_the_pip_package():
    out = run_fresh(without("nn") + """
import importlib
for imp in (lambda: __import__("fw.nn"), lambda: importlib.import_module("fw.nn")):
    try:
        imp()
    except ModuleNotFoundError as e:
        print(e.name, "|", e)
""")
    want = "fw.nn | fw.nn is provided by the fw-nn package: pip install fw-nn"
    assert out.splitlines() == [want, want]


def test_attribute_probes_of_a_missing_package_answer_false():
    out = run_fresh(without("jit") + """
import importlib, importlib.util
print(hasattr(fw, "jit"), getattr(fw, "jit", None), hasattr(fw, "enable_static"),
      importlib.util.find_spec("fw.jit"), importlib.util.find_spec("fw.static"))
try:
    fw.jit
except AttributeError as e:
    print(e)
""")
    lines = out.splitlines()
    assert lines[0] == "False None False None None"
    assert lines[1] == "fw.jit is provided by the fw-jit package: pip install fw-jit"


def test_without_fw_autograd_fw_core_runs_and_backward_names_the_package():
    out = run_fresh(without("autograd") + """
x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
y = (x * x).sum()
print(y.numpy().tolist(), y.stop_gradient, hasattr(fw, "grad"))
try:
    y.backward()
except ModuleNotFoundError as e:
    print(e)
""")
    lines = out.splitlines()
    assert lines[0] == "5.0 True False"
    assert lines[1] == ("Tensor.backward needs automatic differentiation, which is provided by "
                        "the fw-autograd package: pip install fw-autograd")


@pytest.mark.parametrize("name, pkg", [("vision", "fw-vision"), ("distributed", "fw-distributed"),
                                       ("hub", "fw-hub"), ("quantization", "fw-slim")])
def test_planned_packages_point_to_their_pip_package(name, pkg):
    out = run_fresh(without(name) + f"""
print(hasattr(fw, {name!r}))
try:
    import fw.{name}
except ModuleNotFoundError as e:
    print(e)
""")
    assert out.splitlines() == ["False", f"fw.{name} is provided by the {pkg} package: "
                                         f"pip install {pkg}"]


def test_a_name_no_package_provides_names_no_package():
    # Paddle's `cinn` (its compiler): no fw package provides it, so nothing may be named
    out = run_fresh(without("cinn") + """
print(hasattr(fw, "cinn"))
try:
    fw.cinn
except AttributeError as e:
    print(e)
try:
    import fw.cinn
except ModuleNotFoundError as e:
    print(e)
import fw.utils  # simulate fw-hub's absence: drop its portion of fw.utils
fw.utils.__path__[:] = [p for p in fw.utils.__path__
                        if not os.path.exists(os.path.join(p, "download.py"))]
try:
    import fw.utils.download
except ModuleNotFoundError as e:
    print(e)
""")
    assert out.splitlines() == [
        "False", "module 'fw' has no attribute 'cinn'", "No module named 'fw.cinn'",
        "fw.utils.download is provided by the fw-hub package: pip install fw-hub"]


# ------------------------------------------------------------ malloc
def test_malloc_is_tuned_when_training_starts_not_at_import():
    code = """
        import fw, fw.core._memory as m
        at_import = m.TUNED
        x = fw.to_tensor([1.0, 2.0], stop_gradient=False)
        y = (x * x).sum()
        before_backward = m.TUNED
        y.backward()
        print(at_import, before_backward, m.TUNED)
    """
    glibc = platform.libc_ver()[0] == "glibc"
    assert run_fresh(code, env={"FW_MALLOC_TUNING": ""}).split() == [
        "False", "False", str(glibc)]
    assert run_fresh(code, env={"FW_MALLOC_TUNING": "0"}).split() == ["False"] * 3
    assert run_fresh(code, env={"FW_MALLOC_TUNING": "1"}).split() == [str(glibc)] * 3


# ------------------------------------------------------------ cached code of generated ops
def test_generated_functions_run_the_code_of_their_source():
    # whether it came from the cache file or was compiled now, each generated
    # function's code is the code its source compiles to
    import fw.core.ops._api as api

    # (a function taking Paddle's argument aliases is a wrapper: its __wrapped__ is generated)
    gens = {f.op.name: getattr(f, "__wrapped__", f) for f in api.FUNCTIONS.values()
            if getattr(f, "source", None)}
    assert len(gens) > 50
    for name, f in gens.items():
        module = compile(f.source, f"<fw op {name}>", "exec")
        (want,) = [c for c in module.co_consts if type(c) is type(module)]
        assert f.__code__.co_code == want.co_code and f.__code__.co_consts == want.co_consts, name
        assert f.__code__.co_filename == f"<fw op {name}>"
