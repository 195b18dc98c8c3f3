"""fw.inference.serving end to end: a real uvicorn server on a loopback port (in a
thread of this process), talked to with the standard library's http.client.

Every answer is compared with a Predictor run alone on the same request. Servers
bind 127.0.0.1 port 0, wait for readiness with a timeout and are always stopped
(fixtures with finally). Waits are on events or observable state with deadlines,
never on sleeps.
"""

from __future__ import annotations

import http.client
import io
import json
import re
import socket
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
from fw.inference.serving import Server, ServingOptions  # noqa: E402

WAIT_S = 60.0  # generous bound of any single wait (2 busy cores)
LIMIT = 64 << 10  # the body limit of the shared server


# ---------------------------------------------------------------- models
def _param(rng, shape, name):
    t = fw.to_tensor((rng.standard_normal(shape) * 0.5).astype(np.float32))
    t.name, t.persistable, t.trainable = name, True, True
    return t


def mlp_program(seed=0):
    """x [-1, 8] float32 -> linear 16 -> relu -> linear 4: batches."""
    rng = np.random.default_rng(seed)
    w0, b0 = _param(rng, (8, 16), "fc0.weight"), _param(rng, (16,), "fc0.bias")
    w1, b1 = _param(rng, (16, 4), "fc1.weight"), _param(rng, (4,), "fc1.bias")
    return trace(lambda x: call("linear", call("relu", call("linear", x, w0, b0)), w1, b1),
                 [TensorType([-1, 8], "float32")], ["x"])


def pair_program():
    """image [-1, 3, 4, 4] and scale [3] (a static leading dim: runs alone) ->
    (mean over the image * scale, its tanh)."""

    def f(image, scale):
        y = image.mean(axis=[2, 3]) * scale
        return y, y.tanh()

    return trace(f, [TensorType([-1, 3, 4, 4], "float32"), TensorType([3], "float32")],
                 ["image", "scale"])


class Hooked:
    """A Predictor whose run calls `hook(inputs)` first (clones share the hook)."""

    def __init__(self, predictor, hook):
        self._p, self._hook = predictor, hook

    def clone(self):
        return Hooked(self._p.clone(), self._hook)

    def run(self, inputs):
        self._hook(inputs)
        return self._p.run(inputs)

    def __getattr__(self, name):
        return getattr(self._p, name)


def poison(inputs):
    if (inputs[0][..., 0] == 666).any():
        raise RuntimeError("a row starts with 666")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("serving")
    paths = {"mlp": d / "mlp.fwmodel", "pair": d / "pair.fwmodel"}
    save(mlp_program(), paths["mlp"])
    save(pair_program(), paths["pair"])
    return paths


@pytest.fixture(scope="module")
def refs(files):
    """Predictors of the same files, run alone on each request by the tests."""
    return {n: infer.create_predictor(infer.Config(str(p))) for n, p in files.items()}


def alone(ref, arrays):
    return [np.asarray(o) for o in ref.run(arrays)]


def started(models, **opts):
    return Server(models, ServingOptions(**opts), host="127.0.0.1", port=0).start(WAIT_S)


@pytest.fixture(scope="module")
def server(files):
    faulty = Hooked(infer.create_predictor(infer.Config(str(files["mlp"]))), poison)
    srv = started({"mlp": files["mlp"], "pair": files["pair"], "faulty": faulty},
                  max_batch_size=8, batch_timeout_ms=10, max_body_bytes=LIMIT)
    try:
        yield srv
    finally:
        assert srv.stop(WAIT_S), "the shared server did not stop in time"


# ---------------------------------------------------------------- client
def request(port, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.getheader("content-type") or "", r.read()
    finally:
        conn.close()


def post_json(port, model, doc):
    status, ctype, raw = request(port, "POST", f"/v1/models/{model}:predict",
                                 json.dumps(doc), {"Content-Type": "application/json"})
    return status, json.loads(raw)


def npy(a) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


# ---------------------------------------------------------------- endpoints
def test_models_list_their_inputs_and_outputs_with_shapes_and_dtypes(server):
    status, ctype, raw = request(server.port, "GET", "/v1/models")
    assert status == 200 and ctype.startswith("application/json")
    models = {m["name"]: m for m in json.loads(raw)["models"]}
    assert sorted(models) == ["faulty", "mlp", "pair"]
    assert models["mlp"] == {
        "name": "mlp", "inputs": [{"name": "x", "shape": [-1, 8], "dtype": "float32"}],
        "outputs": [{"name": "output_0", "shape": [-1, 4], "dtype": "float32"}],
        "batching": True}
    assert [i["shape"] for i in models["pair"]["inputs"]] == [[-1, 3, 4, 4], [3]]
    assert models["pair"]["batching"] is False
    status, _, raw = request(server.port, "GET", "/v1/models/pair")
    assert status == 200 and json.loads(raw) == models["pair"]
    status, _, raw = request(server.port, "GET", "/v1/models/nope")
    assert status == 404 and "no model named 'nope'" in json.loads(raw)["error"]


def test_health_ready_and_unknown_routes(server):
    assert request(server.port, "GET", "/health")[::2] == (200, b'{"status":"ok"}')
    status, _, raw = request(server.port, "GET", "/ready")
    assert status == 200 and json.loads(raw) == {"status": "ready",
                                                 "models": ["faulty", "mlp", "pair"]}
    status, _, raw = request(server.port, "GET", "/nope")
    assert status == 404 and json.loads(raw) == {"error": "Not Found: GET /nope"}
    status, _, raw = request(server.port, "GET", "/v1/models/mlp:predict")
    assert status == 405 and json.loads(raw)["error"] == "mlp:predict takes POST (a JSON or " \
                                                         "binary body)"


def test_json_predict_answers_what_the_predictor_computes_alone(server, refs):
    x = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    status, doc = post_json(server.port, "mlp", {"inputs": {"x": x.tolist()}})
    assert status == 200 and list(doc) == ["outputs"]
    got = np.array(doc["outputs"]["output_0"], np.float32)
    (want,) = alone(refs["mlp"], [x])
    assert got.shape == (3, 4) and np.array_equal(got, want)  # float32 survives JSON exactly
    # a two-input model, both outputs; ints are fine for a float input
    image = np.arange(2 * 48, dtype=np.float32).reshape(2, 3, 4, 4) / 10
    status, doc = post_json(server.port, "pair", {"inputs": {"image": image.tolist(),
                                                             "scale": [1, 2, 3]}})
    want = alone(refs["pair"], [image, np.array([1, 2, 3], np.float32)])
    assert status == 200 and sorted(doc["outputs"]) == ["output_0", "output_1"]
    for name, w in zip(["output_0", "output_1"], want):
        assert np.array_equal(np.array(doc["outputs"][name], np.float32), w)


def test_paddle_serving_feed_fetch_body(server, refs):
    image = np.ones((3, 4, 4), np.float32)
    status, doc = post_json(server.port, "pair", {
        "feed": [{"image": image.tolist(), "scale": [1, 1, 1]}], "fetch": ["output_1"]})
    (_, want) = alone(refs["pair"], [image[None], np.ones(3, np.float32)])
    assert status == 200 and list(doc) == ["result"] and list(doc["result"]) == ["output_1"]
    assert np.array_equal(np.array(doc["result"]["output_1"], np.float32), want)


def test_binary_bodies_and_answers(server, refs):
    from safetensors.numpy import load
    from safetensors.numpy import save as st_save

    x = np.random.default_rng(2).standard_normal((5, 8)).astype(np.float32)
    (want,) = alone(refs["mlp"], [x])
    # .npy in, .npy out (the request's own format)
    status, ctype, raw = request(server.port, "POST", "/v1/models/mlp:predict", npy(x),
                                 {"Content-Type": "application/x-npy"})
    assert status == 200 and ctype == "application/x-npy"
    assert np.array_equal(np.load(io.BytesIO(raw)), want)
    # .npy in, JSON out when asked
    status, ctype, raw = request(server.port, "POST", "/v1/models/mlp:predict", npy(x),
                                 {"Content-Type": "application/x-npy",
                                  "Accept": "application/json"})
    assert status == 200 and np.array_equal(
        np.array(json.loads(raw)["outputs"]["output_0"], np.float32), want)
    # safetensors in and out, for a two-input model
    image, scale = np.ones((2, 3, 4, 4), np.float32), np.array([1, 2, 3], np.float32)
    status, ctype, raw = request(server.port, "POST", "/v1/models/pair:predict",
                                 st_save({"image": image, "scale": scale}),
                                 {"Content-Type": "application/x-safetensors"})
    assert status == 200 and ctype == "application/x-safetensors"
    got = load(raw)
    for name, w in zip(["output_0", "output_1"], alone(refs["pair"], [image, scale])):
        assert np.array_equal(got[name], w)
    # an .npy answer of a two-output model must name the output
    status, _, raw = request(server.port, "POST", "/v1/models/pair:predict",
                             st_save({"image": image, "scale": scale}),
                             {"Content-Type": "application/x-safetensors",
                              "Accept": "application/x-npy"})
    assert status == 400 and "?output=NAME" in json.loads(raw)["error"]
    status, _, raw = request(server.port, "POST", "/v1/models/pair:predict?output=output_1",
                             st_save({"image": image, "scale": scale}),
                             {"Content-Type": "application/x-safetensors",
                              "Accept": "application/x-npy"})
    assert status == 200 and np.array_equal(np.load(io.BytesIO(raw)),
                                            alone(refs["pair"], [image, scale])[1])


def test_bad_requests_are_4xx_with_a_message_and_the_server_stays_up(server, refs):
    port = server.port
    cases = [
        ({"inputs": {"y": [[0] * 8]}}, 400, "no input(s) ['y']; its inputs are ['x']"),
        ({"inputs": {"x": [[0] * 7]}}, 400, "input 'x' expects shape [-1, 8] (-1: any size), "
                                            "got [1, 7]"),
        ({"inputs": {"x": [[0] * 8, [0] * 7]}}, 400, "x[0] has 8 elements, x[1] has 7"),
        ({"inputs": {"x": [["a"] * 8]}}, 400, "input 'x' expects float32 numbers, got strings"),
    ]
    for doc, code, words in cases:
        status, answer = post_json(port, "mlp", doc)
        assert status == code and words in answer["error"], (doc, answer)
    status, _, raw = request(port, "POST", "/v1/models/mlp:predict", b'{"inputs": {"x": [[',
                             {"Content-Type": "application/json"})
    assert status == 400 and "malformed JSON body" in json.loads(raw)["error"]
    status, _, raw = request(port, "POST", "/v1/models/mlp:predict",
                             npy(np.zeros((1, 8)))[:-8], {"Content-Type": "application/x-npy"})
    assert status == 400 and "malformed .npy body for input 'x'" in json.loads(raw)["error"]
    status, _, raw = request(port, "POST", "/v1/models/mlp:predict", npy(np.zeros((1, 8))),
                             {"Content-Type": "application/x-npy"})
    assert status == 400 and "expects float32 data, got float64" in json.loads(raw)["error"]
    status, _, raw = request(port, "POST", "/v1/models/nope:predict", b"{}")
    assert status == 404 and "this server has ['faulty', 'mlp', 'pair']" in raw.decode()
    # still serving, correctly
    x = np.ones((1, 8), np.float32)
    status, doc = post_json(port, "mlp", {"inputs": {"x": x.tolist()}})
    assert status == 200 and np.array_equal(np.array(doc["outputs"]["output_0"], np.float32),
                                            alone(refs["mlp"], [x])[0])


def test_bodies_over_the_limit_are_413(server):
    # sent whole (read and dropped, so the client reads the answer), chunked, and
    # announced by Content-Length only (answered before any body is read)
    big = json.dumps({"inputs": {"x": [[0.125] * 8] * 2000}}).encode()
    assert len(big) > LIMIT
    status, _, raw = request(server.port, "POST", "/v1/models/mlp:predict", big)
    assert status == 413 and f"over the limit of {LIMIT} bytes" in json.loads(raw)["error"]
    chunks = (big[i:i + 4096] for i in range(0, len(big), 4096))
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT_S)
    try:
        conn.request("POST", "/v1/models/mlp:predict", body=chunks, encode_chunked=True)
        r = conn.getresponse()
        assert r.status == 413 and "over the limit" in json.loads(r.read())["error"]
    finally:
        conn.close()
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT_S) as s:
        s.sendall(b"POST /v1/models/mlp:predict HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Length: 1000000000\r\n\r\n")
        answer = b""
        while chunk := s.recv(65536):  # the server closes the connection after it
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413 ") and b"1000000000 bytes" in answer


def test_an_exception_in_the_model_is_a_500_for_that_request_only(server, refs):
    x = np.ones((2, 8), np.float32)
    x[1, 0] = 666
    status, doc = post_json(server.port, "faulty", {"inputs": {"x": x.tolist()}})
    assert status == 500
    assert doc["error"] == ("model 'faulty' failed on this request: RuntimeError: a row starts "
                            "with 666")
    status, doc = post_json(server.port, "faulty", {"inputs": {"x": x[:1].tolist()}})
    assert status == 200 and np.array_equal(np.array(doc["outputs"]["output_0"], np.float32),
                                            alone(refs["mlp"], [x[:1]])[0])


# ---------------------------------------------------------------- 1,000 mixed requests
def _mixed_requests(rng, refs, n):
    """`n` requests of every kind, each with the check of its answer."""
    kinds = ["mlp_json"] * 25 + ["mlp_npy"] * 10 + ["mlp_st"] * 5 + ["mlp_feed"] * 5 + \
        ["pair_json"] * 10 + ["faulty_ok"] * 10 + ["faulty_bad"] * 3 + ["malformed"] * 4 + \
        ["wrong_name"] * 4 + ["wrong_shape"] * 4 + ["wrong_dtype"] * 3 + ["ragged"] * 3 + \
        ["too_big"] * 2 + ["no_model"] * 2 + ["bad_npy"] * 2 + ["list"] * 2 + ["health"] * 1
    from safetensors.numpy import save as st_save

    out = []
    for _ in range(n):
        kind = kinds[rng.integers(len(kinds))]
        rows = int(rng.integers(1, 5))
        x = rng.standard_normal((rows, 8)).astype(np.float32)
        jh = {"Content-Type": "application/json"}
        if kind in ("mlp_json", "faulty_ok", "faulty_bad"):
            model = "mlp" if kind == "mlp_json" else "faulty"
            if kind == "faulty_bad":
                x[rng.integers(rows), 0] = 666
            req = ("POST", f"/v1/models/{model}:predict", json.dumps({"inputs": {"x": x.tolist()}}),
                   jh)
            want = None if kind == "faulty_bad" else alone(refs["mlp"], [x])
        elif kind == "mlp_npy":
            req = ("POST", "/v1/models/mlp:predict", npy(x), {"Content-Type": "application/x-npy"})
            want = alone(refs["mlp"], [x])
        elif kind == "mlp_st":
            req = ("POST", "/v1/models/mlp:predict", st_save({"x": x}),
                   {"Content-Type": "application/x-safetensors"})
            want = alone(refs["mlp"], [x])
        elif kind == "mlp_feed":
            doc = {"feed": [{"x": r.tolist()} for r in x], "fetch": ["output_0"]}
            req = ("POST", "/v1/models/mlp:predict", json.dumps(doc), jh)
            want = alone(refs["mlp"], [x])
        elif kind == "pair_json":
            image = rng.standard_normal((rows, 3, 4, 4)).astype(np.float32)
            scale = rng.standard_normal(3).astype(np.float32)
            doc = {"inputs": {"image": image.tolist(), "scale": scale.tolist()}}
            req = ("POST", "/v1/models/pair:predict", json.dumps(doc), jh)
            want = alone(refs["pair"], [image, scale])
        elif kind == "malformed":
            req = ("POST", "/v1/models/mlp:predict", json.dumps({"inputs": {"x": x.tolist()}})[:-3],
                   jh)
            want = (400, "malformed JSON body")
        elif kind == "wrong_name":
            req = ("POST", "/v1/models/mlp:predict", json.dumps({"inputs": {"z": x.tolist()}}), jh)
            want = (400, "no input(s) ['z']")
        elif kind == "wrong_shape":
            req = ("POST", "/v1/models/mlp:predict",
                   json.dumps({"inputs": {"x": x[:, :5].tolist()}}), jh)
            want = (400, f"expects shape [-1, 8] (-1: any size), got [{rows}, 5]")
        elif kind == "wrong_dtype":
            req = ("POST", "/v1/models/mlp:predict", npy(x.astype(np.float64)),
                   {"Content-Type": "application/x-npy"})
            want = (400, "input 'x' expects float32 data, got float64")
        elif kind == "ragged":
            doc = {"inputs": {"x": x.tolist() + [[1.0] * 3]}}
            req = ("POST", "/v1/models/mlp:predict", json.dumps(doc), jh)
            want = (400, "is a ragged list")
        elif kind == "too_big":
            doc = {"inputs": {"x": [[0.125] * 8] * 2000}}
            req = ("POST", "/v1/models/mlp:predict", json.dumps(doc), jh)
            want = (413, "over the limit")
        elif kind == "no_model":
            req = ("POST", "/v1/models/nope:predict", json.dumps({"inputs": {}}), jh)
            want = (404, "no model named 'nope'")
        elif kind == "bad_npy":
            req = ("POST", "/v1/models/mlp:predict", npy(x)[:-4],
                   {"Content-Type": "application/x-npy"})
            want = (400, "malformed .npy body")
        elif kind == "list":
            req, want = ("GET", "/v1/models", None, {}), (200, '"name":"mlp"')
        else:
            req, want = ("GET", "/health", None, {}), (200, '"ok"')
        out.append((kind, req, want))
    return out


def _check(kind, want, status, ctype, raw):
    """None if the answer is right, else why not."""
    from safetensors.numpy import load

    if isinstance(want, tuple):
        code, words = want
        text = raw.decode("utf-8", "replace")
        return None if status == code and words in text else f"{status} {text[:300]}"
    if kind == "faulty_bad":
        ok = status == 500 and "a row starts with 666" in raw.decode()
        return None if ok else f"{status} {raw[:300]!r}"
    if status != 200:
        return f"{status} {raw[:300]!r}"
    if kind == "mlp_npy":
        got = [np.load(io.BytesIO(raw))]
    elif kind == "mlp_st":
        got = [load(raw)["output_0"]]
    else:
        doc = json.loads(raw)
        outs = doc["result" if kind == "mlp_feed" else "outputs"]
        got = [np.array(outs[k], np.float32) for k in sorted(outs)]
    if len(got) != len(want):
        return f"{len(got)} outputs, want {len(want)}"
    for g, w in zip(got, want):
        if g.shape != w.shape:
            return f"shape {g.shape}, want {w.shape}"
        if kind == "pair_json":  # runs alone: the very same computation
            if not np.array_equal(g, w):
                return f"differs from the Predictor alone: {g} vs {w}"
        # batched with others: equal up to the float rounding of a batched product
        elif not np.allclose(g, w, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(w).max()))):
            return f"differs from the Predictor alone: {g} vs {w}"
    return None


def test_a_thousand_mixed_concurrent_requests_get_exactly_their_answers(server, refs):
    work = _mixed_requests(np.random.default_rng(7), refs, 1000)
    results = [None] * len(work)
    lock = threading.Lock()
    todo = iter(range(len(work)))

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT_S)
        try:
            while True:
                with lock:
                    i = next(todo, None)
                if i is None:
                    return
                method, path, body, headers = work[i][1]
                try:
                    conn.request(method, path, body=body, headers=headers)
                    r = conn.getresponse()
                    results[i] = (r.status, r.getheader("content-type") or "", r.read())
                except (OSError, http.client.HTTPException) as e:
                    results[i] = (None, "", repr(e).encode())
                    conn.close()  # reconnects on the next request
        finally:
            conn.close()

    deadline = time.monotonic() + 240
    threads = [threading.Thread(target=client, daemon=True) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "clients still busy after 240 s"
    wrong = []
    for (kind, _, want), res in zip(work, results):
        why = _check(kind, want, *res)
        if why is not None:
            wrong.append((kind, why))
    assert not wrong, f"{len(wrong)} wrong answers, e.g. {wrong[:3]}"
    kinds = {k for k, _, _ in work}
    assert len(kinds) == 17, kinds  # every kind was sent
    # the model threads did group concurrent requests into batches
    metrics = request(server.port, "GET", "/metrics")[2].decode()
    count = float(re.search(r'fw_serving_batch_requests_count\{model="mlp".*\} (\S+)',
                            metrics).group(1))
    total = float(re.search(r'fw_serving_batch_requests_sum\{model="mlp".*\} (\S+)',
                            metrics).group(1))
    assert total > count, "no batch of the mlp model held more than one request"
    assert request(server.port, "GET", "/ready")[0] == 200


# ---------------------------------------------------------------- metrics
_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-z_]+="(?:[^"\\]|\\.)*",?)*\})? '
                     r'(-?[0-9.e+-]+|\+Inf|NaN)$')


def test_metrics_are_prometheus_text(server):
    x = np.ones((1, 8), np.float32)
    before = server.serving.metrics.requests("mlp", 200)
    for _ in range(3):
        assert post_json(server.port, "mlp", {"inputs": {"x": x.tolist()}})[0] == 200
    status, ctype, raw = request(server.port, "GET", "/metrics")
    assert status == 200 and ctype.startswith("text/plain; version=0.0.4")
    text = raw.decode()
    assert text.endswith("\n")
    typed = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            typed[name] = kind
        elif not line.startswith("# HELP "):
            m = _SAMPLE.match(line)
            assert m, f"not a Prometheus sample line: {line!r}"
            base = re.sub(r"_(bucket|sum|count)$", "", m.group(1))
            assert m.group(1) in typed or base in typed, f"{line!r} has no # TYPE"
    assert typed["fw_serving_requests_total"] == "counter"
    assert typed["fw_serving_request_duration_seconds"] == "histogram"
    assert typed["fw_serving_batch_rows"] == "histogram"
    n = int(re.search(r'fw_serving_requests_total\{model="mlp",code="200",pid="\d+"\} (\d+)',
                      text).group(1))
    assert n == before + 3 == server.serving.metrics.requests("mlp", 200)
    # histogram buckets are cumulative and end at the count
    buckets = [float(v) for v in re.findall(
        r'fw_serving_request_duration_seconds_bucket\{model="mlp",pid="\d+",le="[^"]+"\} (\S+)',
        text)]
    count = float(re.search(r'fw_serving_request_duration_seconds_count\{model="mlp".*\} (\S+)',
                            text).group(1))
    assert buckets == sorted(buckets) and buckets[-1] == count >= n
    assert re.search(r'fw_serving_queue_depth\{model="mlp",pid="\d+"\} 0', text)


# ---------------------------------------------------------------- queue, timeouts, shutdown
class Gate:
    """A model hook that holds every run until `release` (bounded: a forgotten gate
    fails the request after WAIT_S instead of hanging the test)."""

    def __init__(self):
        self.entered = threading.Event()
        self.opened = threading.Event()

    def __call__(self, inputs):
        self.entered.set()
        if not self.opened.wait(WAIT_S):
            raise TimeoutError("the test never released the gate")

    def release(self):
        self.opened.set()


def _in_thread(fn, *args):
    box = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # handed to the test by result()
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()

    def result():
        t.join(WAIT_S)
        assert not t.is_alive(), f"{fn.__name__} did not return within {WAIT_S} s"
        if "error" in box:
            raise box["error"]
        return box["value"]

    return result


def _until(predicate, what):
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.01)  # polling an observable state, with a deadline


@pytest.fixture
def gated(files):
    gate = Gate()
    pred = Hooked(infer.create_predictor(infer.Config(str(files["mlp"]))), gate)
    srv = started({"slow": pred}, max_queue=1, max_batch_size=1)
    try:
        yield srv, gate
    finally:
        gate.release()
        srv.stop(WAIT_S)


def test_a_full_queue_is_a_503_and_the_waiting_requests_still_finish(gated, refs):
    srv, gate = gated
    x = np.ones((1, 8), np.float32)
    doc = {"inputs": {"x": x.tolist()}}
    first = _in_thread(post_json, srv.port, "slow", doc)
    assert gate.entered.wait(WAIT_S), "the first request never reached the model"
    second = _in_thread(post_json, srv.port, "slow", doc)
    runner = srv.serving.models["slow"].runner
    _until(lambda: runner.depth() == 1, "the second request is queued")
    status, answer = post_json(srv.port, "slow", doc)
    assert status == 503 and "1 requests waiting" in answer["error"]
    gate.release()
    want = alone(refs["mlp"], [x])[0]
    for res in (first, second):
        status, answer = res()
        assert status == 200 and np.array_equal(
            np.array(answer["outputs"]["output_0"], np.float32), want)


def test_a_request_that_waits_too_long_is_a_504_a_body_that_never_ends_a_408(files):
    gate = Gate()
    pred = Hooked(infer.create_predictor(infer.Config(str(files["mlp"]))), gate)
    srv = started({"slow": pred}, request_timeout_s=0.2)
    try:
        status, answer = post_json(srv.port, "slow", {"inputs": {"x": [[0] * 8]}})
        assert status == 504
        assert answer["error"].startswith("model 'slow' gave no answer within 0.2 s")
        with socket.create_connection(("127.0.0.1", srv.port), timeout=WAIT_S) as s:
            s.sendall(b"POST /v1/models/slow:predict HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Length: 100\r\n\r\n{\"inputs\": ")  # and nothing more
            answer = b""
            while chunk := s.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 408 ")
        assert b"the request body did not arrive within 0.2 s" in answer
    finally:
        gate.release()
        assert srv.stop(WAIT_S)


def test_stop_refuses_new_connections_and_finishes_the_request_in_flight(gated, refs):
    srv, gate = gated
    x = np.full((1, 8), 0.5, np.float32)
    in_flight = _in_thread(post_json, srv.port, "slow", {"inputs": {"x": x.tolist()}})
    assert gate.entered.wait(WAIT_S), "the request never reached the model"
    stopped = _in_thread(srv.stop, WAIT_S)

    def refused():
        try:
            socket.create_connection(("127.0.0.1", srv.port), timeout=WAIT_S).close()
        except ConnectionRefusedError:
            return True
        return False

    _until(refused, "the server stops accepting connections")
    gate.release()
    status, answer = in_flight()
    assert status == 200 and np.array_equal(np.array(answer["outputs"]["output_0"], np.float32),
                                            alone(refs["mlp"], [x])[0])
    assert stopped() is True  # it exited once the request was answered
    assert srv.serving.stopping


# ---------------------------------------------------------------- the Python API
def test_model_sources_names_and_errors(files, tmp_path):
    with pytest.raises(ValueError, match=r"two models are named \['mlp'\]"):
        Server([files["mlp"], files["mlp"]], port=0)
    with pytest.raises(FileNotFoundError):
        Server(tmp_path / "missing.fwmodel", port=0)
    with pytest.raises(ValueError, match="max_batch_size must be an int >= 1"):
        ServingOptions(max_batch_size=0)
    with Server([files["mlp"], ("other", files["pair"])], port=0).start(WAIT_S) as srv:
        status, _, raw = request(srv.port, "GET", "/ready")
        assert status == 200 and json.loads(raw)["models"] == ["mlp", "other"]
        assert srv.url == f"http://127.0.0.1:{srv.port}"
    assert srv.serving.stopping
