"""fw.profiler traces the ops of to_static programs (issue 16): a converted Layer's
compiled program reports each kernel call with its shapes while a profiler records."""

import numpy as np
import pytest

import fw
import fw.nn as nn
import fw.profiler as profiler


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # Profiler() writes ./profiler_log/ by default


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(fw.nn.functional.relu(self.fc2(fw.nn.functional.relu(self.fc1(x)))))


def test_to_static_program_ops_are_traced():
    net = Net()
    st = fw.jit.to_static(net)
    x = fw.ones([2, 4])
    want = net(x).numpy()
    st(x)  # converted and compiled outside the recording
    with profiler.Profiler(record_shapes=True, on_trace_ready=lambda p: None) as p:
        out = st(x)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    ir_ops = [e for e in p.events if e.args.get("ir")]
    mm = [e for e in ir_ops if e.name in ("matmul", "linear")]
    assert len(mm) == 3, [e.name for e in ir_ops]
    assert mm[0].args["input_shapes"][0] == [2, 4]
