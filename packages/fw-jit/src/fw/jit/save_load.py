"""`save` and `load`: a layer or function as a model file, and back.

``fw.jit.save(layer, path, input_spec)`` traces the layer's forward **in eval
mode** with the input_spec (or with the input types of its last traced program),
keeps only what the outputs need (no state updates, no auxiliary outputs) and
writes fw's model file ``path + ".fwmodel"`` (`fw.core.ir.save`: the program
text and the weights in one safetensors file, written atomically). Parameters
and buffers are labelled by their structured names (``"fc1.weight"``); other
captured constants keep their own labels.

``fw.jit.load(path)`` reads it back (data only: the program is parsed, never
executed as Python; a malformed or damaged file — its checksums are checked —
raises `ModelFormatError` naming it; a program that writes its own weights, which
``fw.jit.save`` never writes, is refused) as a `TranslatedLayer`: a Layer whose
forward runs the program, whose parameters are trainable `Parameter`\\ s in
sublayers matching the structured names (so ``state_dict()`` has exactly the
saved keys, whatever they are: ``"training"``, ``"_parameters.w"`` and
``"forward"`` are names like any other, stored as data in the layers' parameter
and buffer tables, never set as attributes), and through which gradients flow (one
autograd node per call, `fw.jit._program_op`) — a loaded model can be
fine-tuned with any fw optimizer. The program was traced in eval mode:
``train()``/``eval()`` only set the flag (dropout stays off, batch norm uses its
running statistics).
"""

from __future__ import annotations

import os

import numpy as np

from fw.core.internal import build_state, grad_state
from fw.core.ir import serialize
from fw.core.ir.core import Value
from fw.core.ir.executor import Compiled
from fw.core.tensor import Tensor, to_tensor, wrap
from fw.jit._function import StaticFunction
from fw.jit.input_spec import InputSpec
from fw.nn import Layer, Parameter

__all__ = ["save", "load", "TranslatedLayer", "MODEL_SUFFIX"]

MODEL_SUFFIX = ".fwmodel"
_SAVE_CONFIGS = {"output_spec", "input_names_after_prune", "skip_prune_program", "clip_extra",
                 "combine_params", "separate_parameters", "skip_forward", "use_pir"}


def _model_path(path) -> str:
    p = os.fspath(path)
    return p if p.endswith(MODEL_SUFFIX) else p + MODEL_SUFFIX


def _is_layer(obj) -> bool:
    return "_sub_layers" in getattr(obj, "__dict__", ()) and hasattr(type(obj), "forward")


def _specs(input_spec):
    out = []
    for i, s in enumerate(input_spec):
        if isinstance(s, InputSpec):
            out.append(s)
        elif isinstance(s, Tensor):
            out.append(InputSpec.from_tensor(s, name=f"input_{i}" if s.__dict__.get("_name")
                                             is None else None))
        elif isinstance(s, np.ndarray):
            out.append(InputSpec.from_numpy(s))
        elif isinstance(s, (list, tuple, dict)):
            out.append(type(s)(_specs(s)) if not isinstance(s, dict) else
                       {k: _specs([v])[0] for k, v in s.items()})
        else:
            out.append(s)  # a Python value: traced as a constant
    return out


def _specs_of(cp):
    return [InputSpec(list(a.type.shape), a.type.dtype, a.label) for a in cp.inputs]


def save(layer, path, input_spec=None, **configs):
    """Write `layer` (a Layer, a `to_static` function or a plain function) to the
    model file ``path + ".fwmodel"`` (see the module docstring).

    Args:
        layer: the Layer or function.
        path: the path prefix (a path ending in ``.fwmodel`` is used as it is).
        input_spec: list of `InputSpec` (or example Tensors) for forward's
            arguments; default: the input_spec given to to_static, else the input
            types of the last program traced.
        **configs: Paddle's save options are accepted; ``output_spec`` (a list of
            output indices) keeps only those outputs.

    Returns:
        the model file's path.

    Examples:
        >>> import fw
        >>> net = fw.nn.Linear(4, 2)
        >>> fw.jit.save(net, "out/net", input_spec=[fw.static.InputSpec([None, 4], "float32", "x")])
        'out/net.fwmodel'
        >>> import os
        >>> os.listdir("out")
        ['net.fwmodel']
    """
    from fw.static._prune import prune

    for k in configs:
        if k not in _SAVE_CONFIGS:
            raise TypeError(f"fw.jit.save: unknown option {k!r}")
    inst = None
    if _is_layer(layer):
        inst = layer
        fwd = layer.forward
        sf = fwd if isinstance(fwd, StaticFunction) else StaticFunction(type(layer).forward,
                                                                        instance=layer)
    elif isinstance(layer, StaticFunction):
        sf = layer
        inst = sf._instance
    elif callable(layer):
        sf = StaticFunction(layer)
    else:
        raise TypeError(f"fw.jit.save: expected a Layer or a function, got "
                        f"{type(layer).__name__}")
    if input_spec is not None:
        specs = _specs(list(input_spec))
    elif sf._input_spec is not None:
        specs = _specs(sf._input_spec)
    else:
        last = sf.program_cache.last()
        if last is None:
            raise ValueError("fw.jit.save: give input_spec (the function has not been called, "
                             "so the input shapes are unknown)")
        specs = _specs_of(last)
    was_training = getattr(inst, "training", None)
    if inst is not None and hasattr(inst, "eval"):
        inst.eval()
    try:
        cp = sf.get_concrete_program(*specs)
    finally:
        if was_training:
            inst.train()
    outs = list(cp.outputs)
    sel = configs.get("output_spec")
    if sel is not None:
        idx = [int(i) for i in sel]
        outs = [outs[i] for i in idx]
    prog, _ = prune(cp.main_program, outs, list(cp.inputs), keep_updates=False)
    _relabel(prog, inst)
    path = _model_path(path)
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    serialize.save(prog, path)
    return path


def _relabel(prog, layer) -> None:
    """Label the layer's parameters and buffers by their structured names."""
    if layer is None:
        return
    names = {}
    for n, p in layer.named_parameters():
        names[id(p)] = n
    for n, b in layer.named_buffers():
        names.setdefault(id(b), n)
    new_cap = {}
    taken = set()
    args = [a for a in prog.block.args if a.role in ("param", "const")]
    wanted = {}
    for a in args:
        t = prog.captured[a.label]
        wanted[a] = names.get(id(t), a.label)
    for a in args:
        lab = wanted[a]
        base, k = lab, 1
        while lab in taken:
            lab = f"{base}_{k}"
            k += 1
        taken.add(lab)
        new_cap[lab] = prog.captured[a.label]
        a.label = lab
    prog.captured = new_cap
    prog.touch()


class TranslatedLayer(Layer):
    """A Layer running a loaded program (see the module docstring).

    ``program()`` returns the program; parameters and buffers live in
    sublayers named after the saved structured names: a label ``"a.b.w"`` is
    parameter ``w`` of sublayer ``b`` of sublayer ``a``, so ``state_dict()``
    gives the labels back unchanged. The names are entries of the layers'
    ``_parameters`` / ``_buffers`` / ``_sub_layers`` tables, not attributes, so
    any name loads (``layer.training`` stays the mode flag even when a
    parameter is called ``training``).

    Args:
        program (Program): the loaded program.
        params (dict): the parameters and buffers by label.
        path (str, optional): the file it came from. Default: None.

    Examples:
        >>> import fw
        >>> fw.jit.save(fw.nn.Linear(4, 2), "out/net",
        ...             input_spec=[fw.static.InputSpec([None, 4], "float32", "x")])
        'out/net.fwmodel'
        >>> loaded = fw.jit.load("out/net")
        >>> type(loaded).__name__, sorted(loaded.state_dict())
        ('TranslatedLayer', ['bias', 'weight'])
    """

    def __init__(self, program, params, path=None):
        super().__init__()
        self.__dict__["_program"] = program
        self.__dict__["_path"] = path
        cap = {}
        for a in program.block.args:
            if a.role not in ("param", "const"):
                continue
            t = params[a.label]
            owner, leaf = self._owner_of(a.label)
            # straight into the tables: add_parameter/register_buffer refuse names
            # that are attributes of a Layer ("training", "_parameters", "forward"),
            # and a saved name is data, whatever it spells
            if a.role == "param":
                p = Parameter._wrap(t._data, name=a.label, trainable=True)
                owner._parameters[leaf] = p
                cap[a.label] = p
            else:
                b = wrap(t._data)
                b.name = a.label
                b.persistable = True
                owner._buffers[leaf] = b
                cap[a.label] = b
        program.captured = cap
        self.__dict__["_grad"] = None
        self.__dict__["_compiled"] = {}
        self.eval()

    def _owner_of(self, label):
        """(layer, name) holding `label`: its dotted prefix is the sublayer path
        (sublayers made as needed), the rest the name (labels are unique, and
        state_dict joins the parts back with dots)."""
        parts = label.split(".")
        layer = self
        for p in parts[:-1]:
            sub = layer._sub_layers.get(p)
            if sub is None:
                sub = Layer()
                layer._sub_layers[p] = sub
            layer = sub
        return layer, parts[-1]

    def program(self):
        """The loaded program.

        Returns:
            Program (``fw.core.ir.Program``).

        Examples:
            >>> import fw
            >>> fw.jit.save(fw.nn.Linear(4, 2), "out/net",
            ...             input_spec=[fw.static.InputSpec([None, 4], "float32", "x")])
            'out/net.fwmodel'
            >>> loaded = fw.jit.load("out/net")
            >>> type(loaded.program()).__name__
            'Program'
        """
        return self._program

    @property
    def input_spec(self) -> list:
        """The `InputSpec` of each input of the loaded program.

        Returns:
            list[InputSpec].

        Examples:
            >>> import fw
            >>> fw.jit.save(fw.nn.Linear(4, 2), "out/net",
            ...             input_spec=[fw.static.InputSpec([None, 4], "float32", "x")])
            'out/net.fwmodel'
            >>> loaded = fw.jit.load("out/net")
            >>> [(s.shape, s.dtype, s.name) for s in loaded.input_spec]
            [((-1, 4), fw.float32, 'x')]
        """
        return [InputSpec(list(a.type.shape), a.type.dtype, a.label)
                for a in self._program.inputs()]

    def forward(self, *inputs):
        prog = self._program
        n_in = len(prog.inputs())
        if len(inputs) != n_in:
            names = ", ".join(a.label or "?" for a in prog.inputs())
            raise TypeError(f"TranslatedLayer: the program takes {n_in} inputs ({names}), "
                            f"got {len(inputs)}")
        sym = next((x for x in inputs if type(x) is Value), None)
        if build_state.builder is not None or sym is not None:
            # inside a program being built (a to_static function using this layer, or
            # fw.static code): the loaded program's ops join it
            from fw.jit._program_op import inline_program

            if build_state.builder is None:
                from fw.static._mode import builder_for

                with builder_for(sym):
                    outs = inline_program(prog, inputs)
            else:
                outs = inline_program(prog, inputs)
            return outs[0] if len(outs) == 1 else outs
        ts = []
        for x, a in zip(inputs, prog.inputs()):
            t = x if isinstance(x, Tensor) else to_tensor(x, dtype=a.type.dtype)
            if t.dtype is not a.type.dtype and not isinstance(x, Tensor):
                t = t.astype(a.type.dtype)
            ts.append(t)
        if grad_state.enabled:
            if self._grad is None:
                from fw.jit._program_op import ProgramGrad

                self.__dict__["_grad"] = ProgramGrad(prog)
            if self._grad.needs_grad(ts):
                self._check(ts)
                outs = self._grad(ts)
                return outs[0] if len(outs) == 1 else outs
        arrays = [t._data for t in ts]
        c = self._compiled.get("cpu")
        if c is None:
            c = Compiled(prog)
            self._compiled["cpu"] = c
        outs = [wrap(np.asarray(o) if isinstance(o, np.generic) else o)
                for o in c(arrays)]
        return outs[0] if len(outs) == 1 else outs

    def _check(self, ts):
        for t, a in zip(ts, self._program.inputs()):
            s = tuple(t._data.shape)
            if t.dtype is not a.type.dtype or len(s) != a.type.ndim or any(
                    e not in (-1, g) for e, g in zip(a.type.shape, s)):
                raise ValueError(f"TranslatedLayer: input {a.label!r} expects "
                                 f"{a.type.dtype.name}{list(a.type.shape)} (-1: any "
                                 f"size), got {t.dtype.name}{list(s)}")

    def extra_repr(self) -> str:
        return f"program={len(list(self._program.walk()))} ops" + (
            f", path={self._path!r}" if self._path else "")



def load(path, **configs):
    """Read a model file written by `save` (or `fw.static.save_inference_model`) as a
    `TranslatedLayer`.

    Args:
        path: the path prefix given to `save` (or the file).
        **configs: ``strip_state_updates=True`` runs a program that writes its own
            weights without those writes (it is refused otherwise);
            ``limits=fw.core.ir.serialize.LoadLimits(...)`` raises the bounds the
            file must stay within (a huge model). Paddle's other options are
            accepted and ignored.
    Raises:
        FileNotFoundError: no such file.
        ModelFormatError: a malformed or damaged file, or a program with state
            updates (the message names the file).

    Returns:
        TranslatedLayer, a Layer that runs the loaded program.

    Examples:
        >>> import fw
        >>> net = fw.nn.Linear(4, 2)
        >>> fw.jit.save(net, "out/net", input_spec=[fw.static.InputSpec([None, 4], "float32", "x")])
        'out/net.fwmodel'
        >>> loaded = fw.jit.load("out/net")
        >>> x = fw.ones([3, 4])
        >>> bool(fw.allclose(loaded(x), net(x)))
        True
    """
    program, params = serialize.load(
        _model_path(path), for_inference=True,
        strip_updates=bool(configs.get("strip_state_updates", False)),
        limits=configs.get("limits"))
    return TranslatedLayer(program, params, _model_path(path))
