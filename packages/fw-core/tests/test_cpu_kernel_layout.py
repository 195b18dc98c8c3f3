"""The fast cpu kernels live by family: an op's kernel is in
fw/core/kernels/cpu/<family>.py, named like the op's module in fw/core/ops/."""

import importlib

import pytest

from fw.core import _native
from fw.core.kernels.cpu._common import FACTORIES
from fw.core.ops import OPS


def _defined_in(kernel):
    return getattr(kernel, "__wrapped__", kernel).__module__


def test_every_cpu_kernel_lives_in_its_family_module():
    placed = {n: _defined_in(op.kernels["cpu"]) for n, op in OPS.items()
              if "cpu" in op.kernels and _defined_in(op.kernels["cpu"]).startswith(
                  "fw.core.kernels.")}
    assert placed, "no fast cpu kernel attached"
    for name, module in placed.items():
        assert module == f"fw.core.kernels.cpu.{OPS[name].family}", name
        # and the family module of the kernels is the one of the op table
        importlib.import_module(f"fw.core.ops.{OPS[name].family}")


def test_every_factory_is_for_an_op_of_its_module_family():
    assert FACTORIES
    for name, make in FACTORIES.items():
        assert make.__module__ == f"fw.core.kernels.cpu.{OPS[name].family}", name


@pytest.mark.skipif(not _native.available, reason="FW_DISABLE_NATIVE=1")
def test_native_builds_attach_the_onednn_families():
    for name in ("matmul", "linear", "conv", "max_pool", "layer_norm", "softmax",
                 "layer_norm_grad", "fused_conv", "cross_entropy_with_softmax"):
        assert "cpu" in OPS[name].kernels, name
