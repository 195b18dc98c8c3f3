"""The test records live by family: an op's records are in
fw/core/testing/records/<family>.py, named like the op's module in fw/core/ops/."""

import importlib

from fw.core.ops import OPS
from fw.core.testing import load_all


def test_every_record_lives_in_its_family_module():
    records = load_all()
    assert records
    wrong = {n: r.module for n, rs in records.items() for r in rs
             if r.module != f"fw.core.testing.records.{OPS[n].family}"}
    assert not wrong, wrong


def test_every_records_module_is_an_op_family():
    modules = {r.module for rs in load_all().values() for r in rs}
    for m in modules:
        importlib.import_module(f"fw.core.ops.{m.rsplit('.', 1)[1]}")
