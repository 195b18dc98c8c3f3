"""SPMD rules of the optimizer update ops: elementwise over the parameter, its
gradient and its moments (every input of the parameter's shape sharded like it;
learning rates and beta powers whole), as in ZeRO/FSDP-style sharded updates."""

from __future__ import annotations

from fw.distributed.auto_parallel.spmd_rules._base import label_plan, register, replicate_only


@register("sgd", "momentum", "adam", "adamw", "adamax", "adagrad", "adadelta", "rmsprop",
          "asgd", "nadam", "radam", "rprop")
def param_elementwise(ctx):
    """Inputs and outputs of the parameter's shape share its sharding; the rest
    (learning rate, beta powers, step counters) are whole."""
    sp = ctx.specs[0]
    if sp is None or ctx.out_shapes is None:
        return None
    lab = [f"d{d}" for d in range(sp.ndim)]
    names = ctx.op.input_names
    ins = [list(lab) if s is not None and list(s.shape) == list(sp.shape)
           and names[i] not in _SCALARS else None for i, s in enumerate(ctx.specs)]
    outs = [list(lab) if list(s) == list(sp.shape) and o[:-4] not in _SCALARS
            else [None] * len(s) for s, o in zip(ctx.out_shapes, ctx.op.outputs)]
    return label_plan(ctx, ins, outs)


# one value per parameter (by name: a [1]-shaped parameter has their shape too)
_SCALARS = {"learning_rate", "beta1_pow", "beta2_pow", "momentum_decay_pow", "mu_product",
            "rho", "n"}


replicate_only("LAMB scales the update by the trust ratio ||param|| / ||update|| of the whole "
               "parameter: a block would use its own norms", "lamb")
