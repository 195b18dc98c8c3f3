"""`dist.to_static` and `DistModel`: a layer (+ loss + optimizer) as one static
program per rank, built by the passes of this package.

Building (on the first call in a mode, per batch signature): `tracing.trace_step`
(the global program, with the backward in train mode) -> `propagation.propagate`
(a placement for every value, from the annotated inputs/parameters) ->
`partition.partition` (this rank's program, reshards inserted) -> in train mode
the optimizer step, emitted on the local blocks from ``Optimizer.update_plan()``.
Parameters the user left dense get the placements propagation chose and become
distributed parameters of the layer (as after `shard_layer`); the optimizer is
pointed at the local blocks (as `shard_optimizer` does), so its state is per
block and the program updates it in place.

Strategy: ``gradient_merge`` (k_steps, avg), ``sharding`` stages 1 and 2 over the
"dp" axis, ``pipeline`` (a mesh with a "pp" axis: `_pp_model`), ``recompute``
(`recompute`: selective checkpoints) and ``amp`` (`_amp_context`: the forward and
the loss are traced under ``fw.amp.auto_cast`` with the strategy's level, dtype and
lists, so the program holds the casts eager auto_cast performs; the parameters stay
float32 and are the master weights at O2) are honoured; ``fused_passes`` and sharding
stage 3 raise "not supported by dist.to_static yet" — nothing set is ignored.
``auto_mode="full"``: the cost model picks and applies the strategy on the first
batch (`auto_mode`).

On a pipeline, a parameter's block is current on the ranks of its stage only
(the others keep the value it had when the model was built)."""

from __future__ import annotations

import numpy as np

from fw.core.ir.executor import compile_program
from fw.core.tensor import Tensor, wrap
from fw.distributed.auto_parallel._layout import balanced, local_box
from fw.distributed.auto_parallel.dist_tensor import DistParameter, DistTensor
from fw.distributed.auto_parallel.placement import Partial, Replicate, Shard
from fw.distributed.auto_parallel.static.partition import partition
from fw.distributed.auto_parallel.static.propagation import propagate
from fw.distributed.auto_parallel.static.recompute import apply_recompute
from fw.distributed.auto_parallel.static.tracing import trace_step

__all__ = ["DistModel", "to_static"]

_FN = "dist.to_static"


def _unsupported(what):
    return NotImplementedError(f"{_FN}: {what} is not supported by dist.to_static yet")


def _check_strategy(strategy, mesh):
    if strategy is None:
        from fw.distributed.auto.strategy import Strategy

        return Strategy()
    if strategy.fused_passes.enable:
        raise _unsupported("strategy.fused_passes (enable=True)")
    _check_amp(strategy.amp)
    rc = strategy.recompute
    if rc.enable and (rc.checkpoints or rc.no_recompute_segments or rc.refined_ops_patterns
                      or rc.enable_tuning or rc.sr):
        raise _unsupported("strategy.recompute with checkpoints / no_recompute_segments / "
                           "refined_ops_patterns / sr / enable_tuning (the selective policy "
                           "of auto_parallel.static.recompute is)")
    sh = strategy.sharding
    if sh.enable and sh.stage not in (1, 2):
        raise _unsupported(f"strategy.sharding.stage={sh.stage} (stages 1 and 2 are)")
    if sh.enable and mesh is not None:
        _sharding_axis(strategy, mesh)
    if strategy.auto_mode != "semi":
        raise _unsupported(f"strategy.auto_mode={strategy.auto_mode!r} (only 'semi': the "
                           f"annotations decide)")
    if strategy.pipeline.enable and mesh is not None and "pp" not in mesh.dim_names:
        raise ValueError(f"{_FN}: strategy.pipeline is enabled but {mesh} has no 'pp' axis "
                         f"(the pipeline stages are its slices)")
    return strategy


def _check_amp(amp):
    """Refuse the amp settings dist.to_static cannot honour (nothing set is ignored)."""
    if not amp.enable:
        return
    level = str(amp.level).lower()
    if level == "o3":
        raise _unsupported("strategy.amp.level='o3' (pure low precision without float32 "
                           "master weights; 'o1' and 'o2' are)")
    if amp.custom_black_varnames:
        raise _unsupported("strategy.amp.custom_black_varnames (op names in "
                           "custom_black_list are)")
    if amp.use_fp16_guard or amp.use_bf16_guard:
        raise _unsupported("strategy.amp.use_fp16_guard / use_bf16_guard (fw.static amp "
                           "guard regions; the whole forward is auto-cast)")
    if not amp.use_promote:
        raise _unsupported("strategy.amp.use_promote=False (fw's auto_cast always promotes "
                           "mixed float32/low inputs of unlisted ops to float32)")
    if amp.dtype == "float16" and amp.use_dynamic_loss_scaling:
        raise _unsupported("strategy.amp.use_dynamic_loss_scaling=True with dtype='float16' "
                           "(skipping steps on inf/nan and adapting the scale); set "
                           "use_dynamic_loss_scaling=False for a fixed init_loss_scaling, or "
                           "use dtype='bfloat16', which needs no loss scaling")


def _amp_context(amp):
    """``(context factory, loss scale)`` for tracing the forward and the loss under
    `amp` (Strategy.amp), or ``(None, 1.0)`` when amp is off. As in Paddle's static
    engine, bfloat16 uses no loss scaling; float16 scales the loss by the fixed
    ``init_loss_scaling`` and unscales the gradients in the program (powers of two:
    exact unless something overflows). At O2 the parameters are not cast in place:
    every op but the black-listed ones casts its float32 parameter inputs down, so the
    stored float32 parameters are the master weights the optimizer updates (Paddle's
    O2 with ``multi_precision``), and their gradients arrive in float32 through the
    casts (Paddle's ``use_master_grad``)."""
    if not amp.enable or str(amp.level).lower() == "o0":
        return None, 1.0
    from fw.amp import auto_cast

    level = str(amp.level).upper()
    white, black = list(amp.custom_white_list or ()), list(amp.custom_black_list or ())

    def ctx():
        return auto_cast(enable=True, custom_white_list=white, custom_black_list=black,
                         level=level, dtype=amp.dtype)

    scale = float(amp.init_loss_scaling) if amp.dtype == "float16" else 1.0
    return ctx, scale


def _sharding_axis(strategy, mesh):
    """The mesh axis ZeRO shards over: "dp" (Paddle's sharding axis is the
    data-parallel one); strategy.sharding.degree must be its size."""
    if "dp" not in mesh.dim_names:
        raise ValueError(f"{_FN}: strategy.sharding needs a mesh axis named 'dp' to shard "
                         f"the optimizer over; {mesh} has {mesh.dim_names}")
    ax = mesh.dim_names.index("dp")
    if strategy.sharding.degree != mesh.shape[ax]:
        raise ValueError(f"{_FN}: strategy.sharding.degree={strategy.sharding.degree} but the "
                         f"'dp' axis of {mesh} has {mesh.shape[ax]} ranks")
    return ax


def _find_mesh(layer, loader):
    from fw.distributed.auto_parallel.dist_tensor import DistTensor as _DT

    for p in layer.parameters():
        if isinstance(p, _DT):
            return p.process_mesh
    meshes = getattr(loader, "_meshes", None)
    if meshes:
        return meshes[0]
    return None


class _Built:
    """One mode's program on this rank and how to feed it."""

    def __init__(self, traced, prop, rank_prog, compiled, in_placements, extra):
        self.traced, self.prop, self.rank_prog = traced, prop, rank_prog
        self.compiled, self.in_placements, self.extra = compiled, in_placements, extra


class DistModel:
    """The distributed static model `to_static` returns (Paddle's ``DistModel``).

    Call it on a batch: in "train" mode it runs forward, backward and the
    optimizer step and returns the loss; in "eval" mode the loss; in "predict"
    mode the layer's outputs. With a loss, the last batch element is the label.
    Outputs are whole (Replicate) tensors on every rank.

    Args:
        layer (Layer): the model (its parameters may be distributed already).
        loader (ShardDataloader|DataLoader, optional): the data (its meshes give
            the mesh when no parameter is distributed).
        loss (callable, optional): ``loss(outputs, label)``.
        optimizer (Optimizer, optional): needed for "train".
        strategy (Strategy, optional): see the module docstring.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
            >>> lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh)
            >>> opt = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> m = dist.to_static(lin, None, fw.nn.MSELoss(), opt)
            >>> x, y = fw.ones([3, 4]), fw.zeros([3, 2])
            >>> l0, l1 = float(m(x, y)), float(m(x, y))
            >>> l1 < l0
            True
    """

    def __init__(self, layer, loader=None, loss=None, optimizer=None, strategy=None,
                 metrics=None, input_spec=None):
        from fw.nn import Layer

        if not isinstance(layer, Layer):
            raise TypeError(f"{_FN}: layer must be a fw.nn.Layer, got {type(layer).__name__}")
        if loss is not None and not callable(loss):
            raise TypeError(f"{_FN}: loss must be callable (a Layer or function), got "
                            f"{type(loss).__name__}")
        if optimizer is not None and not callable(getattr(optimizer, "update_plan", None)):
            raise TypeError(f"{_FN}: optimizer must be an fw.optimizer.Optimizer, got "
                            f"{type(optimizer).__name__}")
        if metrics:
            raise _unsupported("metrics")
        if input_spec is not None:
            raise _unsupported("input_spec (the batch's shapes and placements are used)")
        self._layer, self._loader, self._loss, self._opt = layer, loader, loss, optimizer
        self._mesh = _find_mesh(layer, loader)
        self._auto = None
        if strategy is not None and strategy.auto_mode == "full":   # the cost model decides
            from fw.distributed.auto_parallel.static.auto_mode import AutoMode

            self._auto = AutoMode(self, strategy)
            strategy = self._auto.initial_strategy
        self._strategy = _check_strategy(strategy, self._mesh)
        self._built: dict = {}
        self._mode = "train" if (optimizer is not None and loss is not None) else (
            "eval" if loss is not None else "predict")
        self._opt_localized = False
        self._lr: dict = {}
        self._merge_count = 0
        self._merge: dict = {}
        self._zero_states: dict = {}
        self._zero_skipped: list = []
        self._recomputed = 0

    # ------------------------------------------------------------ modes
    def train(self):
        """Switch to training (loss + optimizer needed): a call runs forward, backward
        and the optimizer step and returns the loss.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
            >>> lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh)
            >>> opt = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> m = dist.to_static(lin, None, fw.nn.MSELoss(), opt)
            >>> x, y = fw.ones([3, 4]), fw.zeros([3, 2])
            >>> m.train()
            >>> l0, l1 = float(m(x, y)), float(m(x, y))
            >>> l1 < l0
            True
        """
        if self._loss is None or self._opt is None:
            raise ValueError(f"{_FN}: train() needs both a loss and an optimizer")
        self._mode = "train"

    def eval(self):
        """Switch to evaluation: a call returns the loss, with no update.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
            >>> lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh)
            >>> opt = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> m = dist.to_static(lin, None, fw.nn.MSELoss(), opt)
            >>> x, y = fw.ones([3, 4]), fw.zeros([3, 2])
            >>> m.eval()
            >>> float(m(x, y)) == float(m(x, y))
            True
        """
        if self._loss is None:
            raise ValueError(f"{_FN}: eval() needs a loss")
        self._mode = "eval"

    def predict(self):
        """Switch to prediction: a call returns the layer's outputs.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
            >>> lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh)
            >>> opt = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> m = dist.to_static(lin, None, fw.nn.MSELoss(), opt)
            >>> x, y = fw.ones([3, 4]), fw.zeros([3, 2])
            >>> m.predict()
            >>> m(x).shape
            [3, 2]
        """
        self._mode = "predict"

    # ------------------------------------------------------------ building
    def _env(self):
        from fw.distributed.auto_parallel import _comm

        mesh = self._mesh

        def group_of(axis):
            g = _comm.axis_group(mesh, axis)
            return g.id, list(g.ranks)
        return _comm.my_coord(mesh), group_of

    def _mesh_for(self, batch):
        if self._mesh is None:
            for x in batch:
                if isinstance(x, DistTensor):
                    self._mesh = x.process_mesh
                    break
        if self._mesh is None:
            raise ValueError(f"{_FN}: no mesh: distribute a parameter (shard_layer / "
                             f"shard_tensor) or the data (shard_dataloader) first")
        _check_strategy(self._strategy, self._mesh)
        return self._mesh

    def _local_tensor(self, arg, pl, traced, coord):
        """The rank's block of a param/const argument (see the module docstring)."""
        from fw.distributed.auto_parallel.api import shard_tensor

        mesh = self._mesh
        orig = traced.params.get(arg.label)
        if orig is not None:
            if isinstance(orig, DistParameter):
                if list(orig.placements) != list(pl):
                    raise RuntimeError(f"{_FN}: parameter {arg.label!r} is {orig.placements} "
                                       f"but the program needs {pl}")
                return orig._local
            new = shard_tensor(orig, mesh, list(pl))
            for sub in self._layer.sublayers(include_self=True):
                for n, p in list(sub._parameters.items()):
                    if p is orig:
                        sub._parameters[n] = new
            self._replaced[id(orig)] = new
            return new._local
        t = traced.program.captured[arg.label]
        if all(isinstance(p, Replicate) for p in pl):
            return t
        arr = t._data
        box = local_box(arr.shape, pl, mesh, coord)
        blk = np.ascontiguousarray(arr[tuple(slice(s, s + n) for s, n in box)])
        return wrap(blk)

    def _build(self, mode, batch):
        mesh = self._mesh_for(batch)
        coord, group_of = self._env()
        amp_ctx, loss_scale = _amp_context(self._strategy.amp)
        traced = trace_step(self._layer, self._loss, batch, mode, mesh, amp=amp_ctx,
                            loss_scale=loss_scale)
        prog = traced.program
        if mode == "train" and self._strategy.recompute.enable:
            self._recomputed = apply_recompute(prog, prog.block.outputs[0])
        prop = propagate(prog, mesh, traced.annotations)
        rep = [Replicate()] * mesh.ndim
        outs_pl = [rep] * traced.n_outputs
        by_label = {a.label: a for a in prog.block.args}
        for label in traced.grads:
            outs_pl.append(prop.placements[by_label[label]])
        self._replaced = {}
        rp = partition(prog, prop, mesh, coord, group_of,
                       lambda a, pl: self._local_tensor(a, pl, traced, coord), outs_pl,
                       finish=(mode != "train"))
        extra = {"recomputed": self._recomputed if mode == "train" else 0}
        if mode == "train":
            self._emit_train_tail(traced, prop, rp, extra)
        in_pl = [prop.placements[a] for a in prog.inputs()]
        for a, pl in zip(prog.inputs(), in_pl):
            if any(isinstance(p, Partial) for p in pl):
                raise ValueError(f"{_FN}: input {a.label} is Partial; batch data must be "
                                 f"Shard or Replicate")
        return _Built(traced, prop, rp, None, in_pl, extra)

    def _localize_optimizer(self, traced, rp):
        """Point the optimizer at the local blocks (as `shard_optimizer`)."""
        opt = self._opt
        groups = opt.get_param_groups()
        loc = {}
        for label, orig in traced.params.items():
            cur = self._replaced.get(id(orig), orig)
            local = rp.captured.get(label)
            if local is None:          # a parameter of another pipeline stage
                continue
            for key in (orig, cur, getattr(orig, "_local", None), getattr(cur, "_local", None)):
                if key is not None:
                    loc[id(key)] = local
        same = True
        for g in groups:
            # a distributed parameter this rank's program does not update (another
            # pipeline stage's) still needs a local block for the optimizer's buffers
            new = [loc.get(id(p), p._local if isinstance(p, DistTensor) else p)
                   for p in g["params"]]
            same = same and all(a is b for a, b in zip(new, g["params"]))
            g["params"] = new
        if not same:      # (re-setting the groups would rebuild, i.e. reset, the state)
            opt.set_param_groups(groups)

    def _lr_tensor(self, plan, mult):
        t = self._lr.get(mult)
        if t is None:
            t = wrap(np.array([self._opt.get_lr() * mult], dtype=np.float64))
            t.name = f"{plan.name}_learning_rate_{len(self._lr)}"
            t.persistable = True
            self._lr[mult] = t
        return t

    def _emit_train_tail(self, traced, prop, rp, extra):
        """loss + optimizer step (with gradient merge) on this rank's program."""
        from fw.nn import ClipGradByValue

        self._localize_optimizer(traced, rp)
        prog = traced.program
        mesh = self._mesh
        rep = [Replicate()] * mesh.ndim
        by_label = {a.label: a for a in prog.block.args}
        gm = self._strategy.gradient_merge
        k = gm.k_steps if gm.enable else 1
        b = rp.builder
        with b:
            loss = rp.local(prog.block.outputs[0], rep)
            self._gvals = dict(zip(traced.grads, prog.block.outputs[traced.n_outputs:]))
            label_of = {id(t): lab for lab, t in rp.captured.items()}
            plan = self._opt.update_plan()
            if plan.clip is not None and not isinstance(plan.clip, ClipGradByValue):
                raise _unsupported(f"gradient clipping {type(plan.clip).__name__} (its norm "
                                   f"would be of the local blocks; ClipGradByValue works)")
            entries = []
            for grp in plan.groups:
                for i, p in enumerate(grp.params):
                    if grp.multi_precision:
                        raise _unsupported("multi_precision optimizers")
                    lab = label_of.get(id(p))
                    if lab is not None and lab in self._gvals:
                        entries.append((grp, i, p, lab))
            zero = self._zero_plan(entries, prop, by_label)
            if zero and k > 1:
                raise _unsupported("strategy.sharding together with gradient_merge")
            grads = {}
            pvals = {}
            for (_g, _i, p, lab) in entries:
                shard = zero.get(lab)
                if shard is None:
                    grads[lab] = rp.local(self._gvals[lab], prop.placements[by_label[lab]])
                    pvals[lab] = b.current_value(p)
                else:            # ZeRO: this rank updates one block of the parameter
                    pvals[lab], grads[lab] = self._zero_inputs(rp, b.current_value(p), shard)
            if k > 1:
                extra["merge"] = self._merge_buffers(entries, grads)
                for (_g, _i, _p, lab) in entries:
                    acc = extra["merge"][lab]
                    grads[lab] = b.current_value(acc) + grads[lab]
                # the accumulating program: acc += grad, no step
                acc_prog = self._accumulate_program(rp, entries, grads, loss, extra["merge"])
                extra["acc"] = acc_prog
                if gm.avg:
                    for lab in list(grads):
                        grads[lab] = grads[lab] * (1.0 / k)
            gs = plan.clip_grads([(p, grads[lab]) for (_g, _i, p, lab) in entries])
            for (grp, i, p, lab), g in zip(entries, gs):
                shard = zero.get(lab)
                pv = pvals[lab]
                g = grp.regularize(pv, g)
                lr = b.current_value(self._lr_tensor(plan, float(grp.lr_mult)))
                states = {name: self._state(grp, i, name, p, shard) for name in grp.states}
                new_p, new_states = grp.update(pv, g, lr, {n: b.current_value(t)
                                                           for n, t in states.items()})
                if shard is not None:
                    d, sizes, ax = shard["dim"], shard["sizes"], shard["axis"]
                    new_p = rp.emitter.gather(new_p, d, sizes, ax, p.name,
                                              ["ZeRO block"], ["whole"])
                b.record_update(p, new_p)
                for n, v in new_states.items():
                    b.record_update(states[n], v)
                if k > 1:
                    acc = extra["merge"][lab]
                    b.record_update(acc, b.current_value(acc) * 0.0)
            b.set_outputs([loss])
        if zero:
            extra["zero"] = {"stage": self._strategy.sharding.stage,
                             "axis": self._mesh.dim_names[next(iter(zero.values()))["axis"]],
                             "n": len(zero), "skipped": list(self._zero_skipped)}
        extra["k"] = k

    def _zero_plan(self, entries, prop, by_label):
        """{param label: how its update is sharded} under strategy.sharding: the
        first tensor dim no mesh axis splits is split over the 'dp' axis (a param
        with no such dim, or already split on 'dp', is updated whole: listed in the
        report)."""
        sh = self._strategy.sharding
        self._zero_skipped = []
        if not sh.enable:
            return {}
        mesh = self._mesh
        ax = _sharding_axis(self._strategy, mesh)
        coord = self._env()[0]
        out = {}
        for (_g, _i, p, lab) in entries:
            pl = prop.placements[by_label[lab]]
            used = {q.dim for q in pl if isinstance(q, Shard)}
            dims = [d for d in range(p.ndim) if d not in used and p._data.shape[d] > 0]
            if not isinstance(pl[ax], Replicate) or not dims:
                self._zero_skipped.append(lab)
                continue
            d = dims[0]
            sizes = balanced(p._data.shape[d], mesh.shape[ax])
            out[lab] = {"dim": d, "sizes": sizes, "axis": ax, "coord": coord[ax],
                        "stage": sh.stage, "label": lab, "pl": pl}
        return out

    def _zero_inputs(self, rp, pv, shard):
        """This rank's block of the parameter and of the reduced gradient: stage 2
        reduce-scatters the gradient straight into the block, stage 1 all-reduces
        it and slices (the gradient whole on every rank, as Paddle's stage 1)."""
        d, sizes, c, ax = shard["dim"], shard["sizes"], shard["coord"], shard["axis"]
        gv = self._gvals[shard["label"]]
        if shard["stage"] == 2:
            want = list(shard["pl"])
            want[ax] = Shard(d)
            g = rp.local(gv, want)
        else:
            g = rp.emitter.slice_block(rp.local(gv, shard["pl"]), d, sizes, c)
        return rp.emitter.slice_block(pv, d, sizes, c), g

    def _state(self, grp, i, name, p, shard):
        """The optimizer state `name` of parameter `i`: the optimizer's own buffer
        (a view: the program updates it in place), or under ZeRO this rank's block
        of it, a tensor of its own (a per-parameter scalar state stays whole)."""
        view = grp.state_view(i, name)
        if shard is not None and list(view.shape) == list(p._data.shape):
            key = (shard["label"], name)
            st = self._zero_states.get(key)
            if st is None:
                d, sizes, c = shard["dim"], shard["sizes"], shard["coord"]
                idx = [slice(None)] * view.ndim
                idx[d] = slice(sum(sizes[:c]), sum(sizes[:c + 1]))
                st = wrap(np.ascontiguousarray(view[tuple(idx)]))
                st.name = f"{p.name}_{name}_0"
                st.persistable = True
                self._zero_states[key] = st
            return st
        st = wrap(view)
        st.name = f"{p.name}_{name}_0"
        st.persistable = True
        return st

    def _merge_buffers(self, entries, grads):
        bufs = {}
        for (_g, _i, p, lab) in entries:
            t = self._merge.get(lab)
            if t is None:
                t = wrap(np.zeros(p._data.shape, p._data.dtype))
                t.name = f"{lab}@GRAD@MERGED"
                t.persistable = True
                self._merge[lab] = t
            bufs[lab] = t
        return bufs

    def _accumulate_program(self, rp, entries, grads, loss, bufs):
        """A copy of the rank program so far whose step adds the gradients into the
        merge buffers (the state update) instead of updating the parameters."""
        from fw.core.ir.builder import Builder

        p = rp.program.clone()
        # the clone's block-0 values, by position, stand for the originals
        src_vals = _all_values(rp.program)
        dst_vals = _all_values(p)
        vmap = dict(zip(src_vals, dst_vals))
        b2 = Builder(p)
        with b2:
            for (_g, _i, _p, lab) in entries:
                b2.record_update(bufs[lab], vmap[grads[lab]])
            b2.set_outputs([vmap[loss]])
        return p

    # ------------------------------------------------------------ running
    def _feed(self, built, batch):
        mesh = self._mesh
        coord = self._env()[0]
        arrays = []
        for x, want in zip(batch, built.in_placements):
            if isinstance(x, DistTensor):
                if list(x.placements) == list(want):
                    arrays.append(x._local._data)
                    continue
                from fw.distributed.auto_parallel.api import unshard_dtensor

                x = unshard_dtensor(x)
            a = x._data if isinstance(x, Tensor) else np.asarray(x)
            box = local_box(a.shape, want, mesh, coord)
            arrays.append(np.ascontiguousarray(a[tuple(slice(s, s + n) for s, n in box)]))
        return arrays

    def __call__(self, *args):
        batch = []
        for a in args:          # Paddle's DistModel flattens lists/tuples of tensors
            items = list(a) if isinstance(a, (list, tuple)) else [a]
            for x in items:
                if not isinstance(x, Tensor):
                    raise TypeError(f"DistModel: the inputs should be tensors or lists of "
                                    f"tensors, got {type(x).__name__}")
                batch.append(x)
        if self._auto is not None:
            batch = self._auto.prepare(batch)
        mode = self._mode
        key = (mode,) + tuple(_sig(x) for x in batch)
        built = self._built.get(key)
        if built is None:
            if "pp" in self._mesh_for(batch).dim_names:
                from fw.distributed.auto_parallel.static._pp_model import build_pipeline

                built = build_pipeline(self, mode, batch)
            else:
                built = self._build(mode, batch)
            self._built[key] = built
        if "pp" in self._mesh.dim_names:
            from fw.distributed.auto_parallel.static._pp_model import run_pipeline

            return run_pipeline(self, built, batch)
        arrays = self._feed(built, batch)
        for mult, t in self._lr.items():
            t._data[0] = self._opt.get_lr() * mult
        prog = built.rank_prog.program
        k = built.extra.get("k", 1)
        if mode == "train" and k > 1:
            self._merge_count += 1
            if self._merge_count % k != 0:
                prog = built.extra["acc"]
        outs = compile_program(prog)(arrays)
        res = [wrap(np.array(o)) for o in outs]
        if mode == "predict":
            return res[0] if len(res) == 1 else res
        return res[0]

    # ------------------------------------------------------------ state and report
    def state_dict(self, mode="all", split_fusion=True):
        """``{name: tensor}``: the parameters ("param"), the optimizer's state
        ("opt") or both ("all"); distributed parameters as distributed tensors.

        Args:
            mode (str, optional): "all", "param" or "opt". Default: "all".
            split_fusion (bool, optional): accepted for Paddle's API. Default: True.

        Returns:
            dict: name -> Tensor.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
            >>> lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh)
            >>> opt = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> m = dist.to_static(lin, None, fw.nn.MSELoss(), opt)
            >>> x, y = fw.ones([3, 4]), fw.zeros([3, 2])
            >>> sorted(m.state_dict("param"))
            ['bias', 'weight']
        """
        if mode not in ("all", "param", "opt"):
            raise ValueError(f"DistModel.state_dict: mode must be 'all', 'param' or 'opt', "
                             f"got {mode!r}")
        out = {}
        if mode in ("all", "param"):
            out.update(self._layer.state_dict())
        if mode in ("all", "opt") and self._opt is not None:
            out.update(self._opt.state_dict())
            for st in self._zero_states.values():   # this rank's ZeRO block
                out[st.name] = st
        return out

    def report(self) -> str:
        """The placements of every parameter and activation and every communication
        inserted (with the bytes this rank sends), per mode built so far.

        Returns:
            str: the report.

        Examples:
            >>> import fw
            >>> import fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
            >>> lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh)
            >>> opt = fw.optimizer.SGD(0.1, parameters=lin.parameters())
            >>> m = dist.to_static(lin, None, fw.nn.MSELoss(), opt)
            >>> x, y = fw.ones([3, 4]), fw.zeros([3, 2])
            >>> _ = m(x, y)
            >>> isinstance(m.report(), str)
            True
        """
        from fw.distributed.auto_parallel.static.report import format_report

        parts = []
        for key, built in self._built.items():
            parts.append(format_report(key[0], built, self._mesh))
        if self._auto is not None:
            parts.insert(0, self._auto.describe())
        if not parts:
            return "DistModel: not built yet (call it on a batch first)"
        return "\n\n".join(parts)

    def __repr__(self):
        return self.report()


def _sig(x):
    if isinstance(x, DistTensor):
        return (tuple(x.shape), str(x.dtype), tuple(map(str, x.placements)))
    if isinstance(x, Tensor):
        return (tuple(x.shape), str(x.dtype), None)
    a = np.asarray(x)
    return (a.shape, str(a.dtype), None)


def _all_values(program):
    vals = list(program.block.args)
    for op in program.block.ops:
        vals.extend(op.results)
    return vals


def to_static(layer, loader=None, loss=None, optimizer=None, strategy=None, input_spec=None):
    """Paddle 3.x's ``paddle.distributed.to_static``: a `DistModel` running `layer`
    (+ `loss`, + `optimizer`) as a static program per rank, partitioned from the
    layer's and the data's shard annotations (README, "dist.to_static").

    Args:
        layer (Layer): the model.
        loader (ShardDataloader|DataLoader, optional): the training data.
        loss (callable, optional): ``loss(outputs, label)``.
        optimizer (Optimizer, optional): the optimizer ("train" mode).
        strategy (Strategy, optional): gradient_merge, sharding (stages 1/2),
            pipeline and recompute are honoured; other enabled features raise
            NotImplementedError. ``auto_mode="full"``: the cost model picks the
            strategy on the first batch (``auto_parallel.static.auto_mode``).
        input_spec (optional): not supported (the batches' shapes are used).

    Returns:
        DistModel.

    Examples:
        .. code-block:: python

            >>> import fw, fw.distributed as dist
            >>> mesh = dist.ProcessMesh([0], dim_names=["dp"])
            >>> lin = dist.shard_layer(fw.nn.Linear(4, 2), mesh)
            >>> m = dist.to_static(lin, None, fw.nn.MSELoss())
            >>> m.eval()
            >>> float(m(fw.ones([3, 4]), lin(fw.ones([3, 4])).detach())) == 0.0
            True
    """
    return DistModel(layer, loader, loss, optimizer, strategy, input_spec=input_spec)

