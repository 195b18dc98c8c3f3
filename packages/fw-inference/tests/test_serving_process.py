"""``python -m fw.inference.serve`` as its own process: two worker processes on one
port, graceful shutdown on SIGTERM with a request in flight, a clear message when
the serving extra is missing, and its argument errors.

Each server runs in its own process group on 127.0.0.1 port 0 (the command prints
the port it got); the group is killed if a test fails, so nothing outlives it.
Every wait has a deadline."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

import fw  # noqa: E402
import fw.inference as infer  # noqa: E402
from fw.core.ir import TensorType, save, trace  # noqa: E402
from fw.core.ops import call  # noqa: E402

WAIT_S = 90.0  # a fresh interpreter imports fw and loads the model: slow on busy cores


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    rng = np.random.default_rng(3)
    w = fw.to_tensor(rng.standard_normal((6, 3)).astype(np.float32))
    b = fw.to_tensor(rng.standard_normal(3).astype(np.float32))
    for t, n in ((w, "fc.weight"), (b, "fc.bias")):
        t.name, t.persistable, t.trainable = n, True, True
    path = tmp_path_factory.mktemp("serve") / "tiny.fwmodel"
    save(trace(lambda x: call("relu", call("linear", x, w, b)),
               [TensorType([-1, 6], "float32")], ["x"]), path)
    return path


@contextlib.contextmanager
def running(args, stdin=None):
    """A Python subprocess in its own process group; yields it and a queue of its
    stdout lines; kills the whole group when the block ends."""
    p = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=stdin, text=True,
                         start_new_session=True)
    lines: queue.Queue = queue.Queue()
    err: list = []

    def pump(stream, sink):
        for line in stream:
            sink(line)

    pumps = [threading.Thread(target=pump, args=(p.stdout, lines.put), daemon=True),
             threading.Thread(target=pump, args=(p.stderr, err.append), daemon=True)]
    for t in pumps:
        t.start()
    p.stderr_lines = err
    try:
        yield p, lines
    finally:
        # the process, or the workers it may have left: the whole group
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait(WAIT_S)
        for t in pumps:
            t.join(WAIT_S)
        for stream in (p.stdin, p.stdout, p.stderr):
            if stream is not None:
                stream.close()


def line_matching(lines, pattern, p):
    deadline = time.monotonic() + WAIT_S
    while True:
        left = deadline - time.monotonic()
        assert left > 0, f"no line matching {pattern!r} within {WAIT_S} s; stderr: " \
                         f"{''.join(p.stderr_lines)[-2000:]}"
        try:
            line = lines.get(timeout=min(left, 1.0))
        except queue.Empty:
            assert p.poll() is None, f"the server exited ({p.returncode}): " \
                                     f"{''.join(p.stderr_lines)[-2000:]}"
            continue
        m = re.search(pattern, line)
        if m:
            return m


def get(port, path, timeout=WAIT_S):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def predict(port, x):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
    try:
        conn.request("POST", "/v1/models/tiny:predict", json.dumps({"inputs": {"x": x.tolist()}}),
                     {"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


def wait_ready(port, p):
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            if get(port, "/ready", timeout=5)[0] == 200:
                return
        except OSError:
            pass
        assert p.poll() is None, f"the server exited: {''.join(p.stderr_lines)[-2000:]}"
        assert time.monotonic() < deadline, f"not ready within {WAIT_S} s"
        time.sleep(0.05)  # polling /ready, with a deadline


def refuses_connections(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


def alive(pid):
    """`pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def workers_of(pid):
    """The pids of the multiprocessing (spawn) children of `pid`."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if ppid == pid and b"spawn_main" in cmd:
            found.append(int(d))
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads worker processes from /proc")
def test_two_worker_processes_serve_one_port_and_stop_on_sigterm(model_file):
    ref = infer.create_predictor(infer.Config(str(model_file)))
    with running(["-m", "fw.inference.serve", str(model_file), "--port", "0",
                  "--workers", "2", "--max-batch-size", "4"]) as (p, lines):
        m = line_matching(lines, r"serving \['tiny'\] on http://127\.0\.0\.1:(\d+) \(2 workers",
                          p)
        port = int(m.group(1))
        wait_ready(port, p)
        deadline = time.monotonic() + WAIT_S
        while len(workers_of(p.pid)) != 2:
            assert time.monotonic() < deadline, f"workers: {workers_of(p.pid)}"
            time.sleep(0.05)  # polling the process table, with a deadline
        workers = workers_of(p.pid)
        rng = np.random.default_rng(0)
        for _ in range(10):
            x = rng.standard_normal((2, 6)).astype(np.float32)
            status, doc = predict(port, x)
            assert status == 200 and np.array_equal(
                np.array(doc["outputs"]["output_0"], np.float32), np.asarray(ref.run([x])[0]))
        p.send_signal(signal.SIGTERM)
        rc = p.wait(WAIT_S)
        assert rc in (0, -signal.SIGTERM), "".join(p.stderr_lines)[-2000:]
        assert not [w for w in workers if alive(w)], "workers left running"


SLOW_SERVER = textwrap.dedent("""
    import select, sys
    import fw.inference as infer
    from fw.inference.serving import Server, ServingOptions

    class Gated:  # holds each run until a line arrives on stdin (at most 90 s)
        def __init__(self, p):
            self.p = p
        def clone(self):
            return Gated(self.p.clone())
        def run(self, inputs):
            print("ENTERED", flush=True)
            if not select.select([sys.stdin], [], [], 90)[0]:
                raise TimeoutError("the test never released the request")
            sys.stdin.readline()
            return self.p.run(inputs)
        def __getattr__(self, name):
            return getattr(self.p, name)

    pred = infer.create_predictor(infer.Config(sys.argv[1]))
    server = Server({"tiny": Gated(pred)}, ServingOptions(max_batch_size=1), port=0)
    print("PORT", server.port, flush=True)
    server.run()
""")


def test_sigterm_finishes_the_request_in_flight_then_exits(model_file, tmp_path):
    script = tmp_path / "slow_server.py"
    script.write_text(SLOW_SERVER)
    ref = infer.create_predictor(infer.Config(str(model_file)))
    x = np.full((1, 6), 0.25, np.float32)
    with running([str(script), str(model_file)], stdin=subprocess.PIPE) as (p, lines):
        port = int(line_matching(lines, r"^PORT (\d+)", p).group(1))
        wait_ready(port, p)
        box = {}
        client = threading.Thread(target=lambda: box.update(answer=predict(port, x)),
                                  daemon=True)
        client.start()
        line_matching(lines, r"^ENTERED", p)
        p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + WAIT_S
        while not refuses_connections(port):
            assert time.monotonic() < deadline, "still accepting connections after SIGTERM"
            time.sleep(0.02)  # polling the port, with a deadline
        assert p.poll() is None, "exited with a request in flight"
        p.stdin.write("go\n")
        p.stdin.flush()
        client.join(WAIT_S)
        assert not client.is_alive(), f"the request in flight got no answer in {WAIT_S} s"
        status, doc = box["answer"]
        assert status == 200 and np.array_equal(np.array(doc["outputs"]["output_0"], np.float32),
                                                np.asarray(ref.run([x])[0]))
        # uvicorn re-raises the signal it handled once it has shut down
        assert p.wait(WAIT_S) in (0, -signal.SIGTERM), "".join(p.stderr_lines)[-2000:]


def test_without_the_serving_extra_the_command_says_how_to_get_it(model_file):
    code = textwrap.dedent(f"""
        import runpy, sys

        class NoServingExtra:  # as if starlette and uvicorn were not installed
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("starlette", "uvicorn"):
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
                return None

        sys.meta_path.insert(0, NoServingExtra())
        sys.argv = ["serve", {str(model_file)!r}]
        runpy.run_module("fw.inference.serve", run_name="__main__")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=WAIT_S)
    assert out.returncode == 2, out.stderr
    assert "fw.inference.serving needs starlette and uvicorn (starlette is missing): " \
           "pip install 'fw-inference[serving]'" in out.stderr
    assert "Traceback" not in out.stderr


def test_command_line_errors_are_one_line(model_file, tmp_path):
    def serve(*args):
        return subprocess.run([sys.executable, "-m", "fw.inference.serve", *args],
                              capture_output=True, text=True, timeout=WAIT_S)

    out = serve(str(tmp_path / "missing.fwmodel"), "--port", "0")
    assert out.returncode == 1 and "FileNotFoundError" in out.stderr
    assert "missing.fwmodel" in out.stderr and "Traceback" not in out.stderr
    out = serve(str(model_file), "--port", "0", "--max-batch-size", "0")
    assert out.returncode == 1 and "max_batch_size must be an int >= 1, got 0" in out.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        out = serve(str(model_file), "--port", str(taken.getsockname()[1]))
    assert out.returncode == 1 and "cannot listen on 127.0.0.1:" in out.stderr
    out = serve("--help")
    assert out.returncode == 0 and "NAME=PATH" in out.stdout
