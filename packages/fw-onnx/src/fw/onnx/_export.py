"""`export` (Paddle's ``paddle.onnx.export``) and `program_to_onnx`."""

from __future__ import annotations

import os

import numpy as np

import onnx
from fw.core.atomic_io import atomic_path
from fw.onnx._context import Context, value_info
from fw.onnx._program import inference_program
from fw.onnx.errors import ExportError, where
from fw.onnx.lowering import LOWERINGS
from onnx import helper

__all__ = ["export", "program_to_onnx", "unsupported_ops", "MIN_OPSET", "DEFAULT_OPSET",
           "SUFFIX"]

# opset 13 is where Squeeze/Unsqueeze/ReduceSum/Split take axes as inputs and Softmax
# one axis: the forms the lowerings emit (the opset-dependent ones are in Context)
MIN_OPSET = 13
DEFAULT_OPSET = 17
SUFFIX = ".onnx"


def _model_path(path) -> str:
    p = os.fspath(path)
    return p if p.endswith(SUFFIX) else p + SUFFIX


def export(layer, path, input_spec=None, opset_version=DEFAULT_OPSET, **configs):
    """Write `layer` as an ONNX model to ``path + ".onnx"`` (Paddle's convention).

    The layer is traced with ``fw.jit`` in eval mode for `input_spec`; dims given as
    None/-1 stay dynamic in the ONNX graph (a batch size of any value runs). The file
    is written atomically: on any error (an op without a lowering, a failed
    ``onnx.checker``) nothing is left at the path.

    Args:
        layer: a ``fw.nn.Layer``, a ``fw.jit.to_static`` function or a plain function.
        path: the path prefix (``"out/model"`` writes ``out/model.onnx``; a path
            already ending in ``.onnx`` is used as it is).
        input_spec: list of ``fw.static.InputSpec`` (or example tensors) for
            forward's arguments; default: the layer's own to_static input_spec.
        opset_version: the ONNX opset (default 17, at least 13).
        **configs: ``output_spec`` (indices of the outputs to keep, Paddle's option),
            ``check=True`` (run ``onnx.checker.check_model`` with full shape checks).

    Returns:
        the path written.

    Raises:
        ExportError: ops with no ONNX lowering (all of them are listed, each with
            the user's source line) or attribute values ONNX cannot express.

    >>> import fw, os, tempfile
    >>> net = fw.nn.Linear(4, 2)
    >>> p = fw.onnx.export(net, os.path.join(tempfile.mkdtemp(), "net"),
    ...                    [fw.static.InputSpec([None, 4], "float32", "x")])
    >>> os.path.basename(p)
    'net.onnx'
    """
    unknown = set(configs) - {"output_spec", "check"}
    if unknown:
        raise TypeError(f"fw.onnx.export: unknown option(s) {sorted(unknown)}")
    _check_opset(opset_version)
    program, labels = inference_program(layer, input_spec, configs.get("output_spec"))
    name = getattr(layer, "__name__", None) or type(layer).__name__  # the graph's name
    model = program_to_onnx(program, opset_version, labels=labels, name=name,
                            check=configs.get("check", True))
    path = _model_path(path)
    data = model.SerializeToString()
    with atomic_path(path, make_parents=True) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)
    return path


def _check_opset(opset):
    top = onnx.defs.onnx_opset_version()
    if not isinstance(opset, int) or isinstance(opset, bool) or not MIN_OPSET <= opset <= top:
        raise ValueError(f"fw.onnx.export: opset_version must be an int in [{MIN_OPSET}, {top}] "
                         f"(the installed onnx package knows opsets up to {top}), got "
                         f"{opset!r}")


def unsupported_ops(program) -> list:
    """List the ops of `program` (nested blocks too) that have no ONNX lowering, in
    program order: check a program before exporting it.

    Args:
        program (Program): the program.

    Returns:
        list[tuple[str, str|None]]: ``(op name, "file:line" or None)`` per op; empty
        when the whole program can be exported.

    Examples:
        >>> import fw
        >>> import fw.onnx
        >>> prog = fw.static.Program()
        >>> with fw.static.program_guard(prog):
        ...     x = fw.static.data("x", [None, 3], "float32")
        ...     y = fw.nn.functional.relu(x) * 2
        >>> inf = fw.static.normalize_program(prog, [x], [y])
        >>> fw.onnx.unsupported_ops(inf)
        []
    """
    return [(op.name, where(op)) for op in program.walk() if op.name not in LOWERINGS]


def program_to_onnx(program, opset_version=DEFAULT_OPSET, labels=None, name="fw", check=True):
    """Convert an fw `Program` to an ONNX ``ModelProto`` (in memory).

    The program's inputs become graph inputs, its parameters and constants initializers
    (named by `labels` or their own labels), its outputs ``output_0``, ``output_1``, ….
    `export` is the file-writing front end for layers.

    Args:
        program (Program): an inference program (e.g. from
            ``fw.static.normalize_program`` or a loaded ``.fwmodel``).
        opset_version (int, optional): the ONNX opset, at least `MIN_OPSET` (13).
            Default: 17.
        labels (dict, optional): names for the initializers. Default: None.
        name (str, optional): the graph's name. Default: "fw".
        check (bool, optional): run ``onnx.checker.check_model``. Default: True.

    Returns:
        onnx.ModelProto: the model.

    Raises:
        ExportError: ops with no lowering (all listed, with their source lines).

    Examples:
        >>> import fw
        >>> import fw.onnx
        >>> prog = fw.static.Program()
        >>> with fw.static.program_guard(prog):
        ...     x = fw.static.data("x", [None, 3], "float32")
        ...     y = fw.nn.functional.relu(x) * 2
        >>> inf = fw.static.normalize_program(prog, [x], [y])
        >>> model = fw.onnx.program_to_onnx(inf)
        >>> [i.name for i in model.graph.input], [o.name for o in model.graph.output]
        (['x'], ['output_0'])
        >>> model.opset_import[0].version
        17
    """
    _check_opset(opset_version)
    missing = unsupported_ops(program)
    if missing:
        names = sorted({n for n, _ in missing})
        lines = "\n".join(f"  - '{n}'" + (f" at {loc}" if loc else " (no source line recorded)")
                          for n, loc in missing)
        raise ExportError(
            f"fw.onnx.export: {len(missing)} op(s) of the program have no ONNX lowering "
            f"({', '.join(names)}):\n{lines}\nAdd a lowering (packages/fw-onnx/README.md, "
            f"'Adding an op') or avoid these ops in the exported forward.",
            [(n, loc, "no ONNX lowering") for n, loc in missing])
    ctx = Context(opset_version, LOWERINGS, labels)
    used = _used_values(program)
    inputs = []
    for i, a in enumerate(program.inputs()):
        n = ctx.reserve(a.label or f"input_{i}")
        ctx.bind(a, n)
        inputs.append(value_info(n, a.type, [f"{n}_dim{k}" for k in range(a.type.ndim)]))
    for a in program.params():
        if a in used:
            ctx.bind(a, ctx.param(a.label, _array(program.captured[a.label])))
    ctx.lower_block(program.block)
    outputs = ctx.outputs(program.outputs, [f"output_{i}" for i in range(len(program.outputs))])
    inits = _referenced(ctx.nodes, ctx.initializers, [o.name for o in outputs])
    graph = helper.make_graph(ctx.nodes, name, inputs, outputs, initializer=inits)
    opsets = [helper.make_opsetid("", opset_version)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="fw",
                              producer_version=_fw_version())
    # the oldest IR version that carries this opset, so older runtimes load the file
    model.ir_version = helper.find_min_ir_version_for(opsets)
    if check:
        onnx.checker.check_model(model, full_check=True)
    return model


def _referenced(nodes, initializers, output_names) -> list:
    """The initializers some node (nested graphs too) or a graph output reads: a
    lowering that re-expresses a parameter (the QDQ ops' scalar scale, int8 zero point)
    leaves the original unread, and onnxruntime warns about every such one."""
    names = set(output_names)

    def visit(ns):
        for n in ns:
            names.update(n.input)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    visit(a.g.node)
                    names.update(o.name for o in a.g.output)
                for g in a.graphs:
                    visit(g.node)
                    names.update(o.name for o in g.output)

    visit(nodes)
    return [t for t in initializers if t.name in names]


def _used_values(program) -> set:
    used = set(program.outputs)
    for op in program.walk():
        used.update(v for v in op.operands if v is not None)
        for b in op.blocks:
            used.update(b.outputs)
    return used


def _array(t):
    return np.asarray(t.numpy())


def _fw_version() -> str:
    from fw.core import __version__

    return __version__
