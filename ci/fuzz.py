"""Structure-aware fuzzing of fw's file loaders (issue 10, "Loaders are fuzzed").

    hatch run fuzz              # the long run: 300 seconds
    hatch run fuzz 60           # seconds
    hatch run fuzz 2000x        # examples per (loader, seed file)

Loaders: ``fw.load`` (fw.save checkpoints and plain safetensors files), ``fw.jit.load``,
``fw.core.ir.load`` and ``fw.inference`` (``Config`` + ``create_predictor`` + one run).
Seed files are written by fw itself; hypothesis draws mutations that know the format:
the header length field, the JSON header (its structure, its depth, each entry's
dtype/shape/data_offsets, the ``__metadata__`` values: a checkpoint's structure — with
the checksum recomputed, so the structure's own checks are what is tested —, a model's
program text and tensor table), the weight bytes, random byte flips and truncation.

Each attempt runs in a worker process (reused across attempts, restarted after a
failure) with an address-space cap (``resource.setrlimit(RLIMIT_AS)``) and a timeout.
An attempt fails when the worker dies of a signal (crash), does not answer within the
timeout (hang), or the loader raises anything but fw's own errors (``FwError``
subclasses: ``CheckpointError``, ``ModelFormatError``, ...) or an OSError (documented for
unreadable files). A "silent wrong load" is a file whose tensor bytes were mutated and
that loads without error but gives other values than the seed: a failure for checkpoints
and model files alike (their checksums must catch it; ``MODEL_FILES_HAVE_CHECKSUM``).

tests/test_fuzz_loaders.py runs a small fixed, derandomized budget in CI.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter

import numpy as np

# Model files carry checksums (format version 2, fw.core.ir.serialize): a model file whose
# weights were altered and that still loads, with other outputs, is a fuzzing failure.
MODEL_FILES_HAVE_CHECKSUM = True

LOADERS = ("fw.load", "fw.jit.load", "fw.core.ir.load", "fw.inference")
TIMEOUT_S = 20.0  # per attempt; a hang is the only thing that gets near it
MEMORY_CAP_MB = 2048  # address space the worker may add to what its imports took
INPUT = np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(2, 4)


# ------------------------------------------------------------------ the worker side
def _digest(obj, h):
    """A canonical hash of what a loader returned (types, order, shapes, bits)."""
    if isinstance(obj, dict):
        h.update(b"{" + type(obj).__name__.encode())
        for k, v in obj.items():
            h.update(repr(k).encode())
            _digest(v, h)
        h.update(b"}")
    elif isinstance(obj, (list, tuple)):
        h.update(b"[" + type(obj).__name__.encode())
        for v in obj:
            _digest(v, h)
        h.update(b"]")
    elif hasattr(obj, "shape") and hasattr(obj, "dtype"):
        a = np.asarray(obj.numpy() if hasattr(obj, "numpy") else obj)
        h.update(f"{a.dtype}{a.shape}".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    else:
        h.update(f"{type(obj).__name__}:{obj!r}".encode())


def _attempt(loader, path):
    import fw

    h = hashlib.sha256()
    if loader == "fw.load":
        _digest(fw.load(path, return_numpy=True), h)
        return h.hexdigest()
    if loader == "fw.jit.load":
        import fw.jit

        out = fw.jit.load(path)(fw.to_tensor(INPUT))
    elif loader == "fw.core.ir.load":
        from fw.core.ir import load, run

        program, _ = load(path)
        out = run(program, INPUT)
    elif loader == "fw.inference":
        import fw.inference as infer

        out = infer.create_predictor(infer.Config(path)).run([INPUT])
    elif loader == "open":  # harness self-test: a blocking open() is a hang
        with open(path, "rb") as f:
            return f.read(1).hex()
    elif loader == "crash":  # harness self-test: death by a signal
        os.abort()
    else:
        raise KeyError(f"no loader {loader!r}")
    _digest(out, h)
    return h.hexdigest()


def _cap_memory(extra_mb):
    import resource

    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) for line in f if line.startswith("VmSize:"))
    limit = (vm + extra_mb * 1024) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def worker_main(extra_mb):
    """Answer one JSON line per request line: {"loader", "path"} -> {"kind", ...}."""
    import fw
    import fw.inference  # noqa: F401  (imported before the cap, like a server would)
    import fw.jit  # noqa: F401
    from fw.core.errors import FwError

    if extra_mb > 0 and sys.platform.startswith("linux"):
        _cap_memory(extra_mb)
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    for line in sys.stdin:
        req = json.loads(line)
        try:
            ans = {"kind": "ok", "digest": _attempt(req["loader"], req["path"])}
        except FwError as e:
            ans = {"kind": "fw_error", "cls": type(e).__name__,
                   "names_file": os.path.basename(req["path"]) in str(e)}
        except OSError as e:
            ans = {"kind": "os_error", "cls": type(e).__name__}
        except BaseException as e:  # noqa: BLE001  (what the fuzzer is looking for)
            ans = {"kind": "uncaught", "cls": type(e).__name__, "msg": str(e)[:300]}
        out.write(json.dumps(ans) + "\n")
        out.flush()


# ------------------------------------------------------------------ the driver side
class Worker:
    """One worker process; `ask` returns its answer, or a crash/hang record (and
    starts a fresh worker for the next attempt)."""

    def __init__(self, memory_cap_mb=MEMORY_CAP_MB, timeout_s=TIMEOUT_S):
        self.cap, self.timeout, self.proc = memory_cap_mb, timeout_s, None
        self.starts = 0

    def _start(self):
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker",
                                      str(self.cap)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.starts += 1
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)  # its imports
        if not ready or self.proc.stdout.readline() != "ready\n":
            self.close()
            raise RuntimeError("the fuzzing worker did not start")

    def ask(self, loader, path):
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.proc.stdin.write(json.dumps({"loader": loader, "path": path}) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
        if not ready:
            self.close()
            return {"kind": "hang"}
        line = self.proc.stdout.readline()
        if not line:
            rc = self.proc.wait()
            self.close()
            return {"kind": "crash", "rc": rc}
        return json.loads(line)

    def close(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc.stdin.close()
            self.proc.stdout.close()
            self.proc = None


def _split(raw):
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def _join(header, data, pad=True):
    h = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def make_seeds(d):
    """{name: (path, loaders)}: the files fw writes, to be mutated."""
    from collections import OrderedDict

    import ml_dtypes
    from safetensors.numpy import save_file

    import fw
    import fw.jit
    import fw.nn as nn

    fw.seed(0)
    rng = np.random.default_rng(0)
    seeds = {}
    lin = nn.Linear(4, 3)
    ckpt = {"model": lin.state_dict(),
            "opt": OrderedDict(step=3, lr=0.1, betas=(0.9, 0.999), flag=True, name="adam",
                               none=None, inf=float("inf")),
            "moments": [rng.standard_normal((2, 3)).astype(np.float16),
                        np.arange(6, dtype=np.int64).reshape(3, 2),
                        np.ones(4, ml_dtypes.bfloat16), np.array([True, False])],
            "z": (rng.standard_normal(3) + 1j).astype(np.complex128),
            "scalar": np.float32(2.5), (1, "k"): {2.5: "tuple and float keys"}}
    p = os.path.join(d, "ckpt.pdparams")
    fw.save(ckpt, p)
    seeds["checkpoint"] = (p, ("fw.load",))
    p = os.path.join(d, "plain.safetensors")
    save_file({"a": rng.standard_normal((3, 4)).astype(np.float32),
               "b": np.arange(5, dtype=np.int32)}, p)
    seeds["safetensors"] = (p, ("fw.load",))
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    p = fw.jit.save(net, os.path.join(d, "net"), input_spec=[fw.jit.InputSpec([None, 4])])
    seeds["model"] = (p, ("fw.jit.load", "fw.core.ir.load", "fw.inference"))
    return seeds


# ---------------------------------------------------------------- mutations
_DTYPES = ["F32", "F64", "F16", "BF16", "I64", "I32", "I8", "U8", "BOOL", "C64", "U64",
           "F8_E4M3", "C128", "", "f32", 5, None, ["F32"]]
_INTS = [0, 1, -1, 2, 7, 8, 63, 64, 65, 255, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 40, 2 ** 62,
         2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, 2 ** 64, -2 ** 63]
_PROGRAM_TOKENS = ["f32", "f64", "i64", "bool", "-1", "0", "1", "4", "8", "3", "1000000000000",
                   "matmul", "add", "relu", "cond", "while", "return", "%0", "%1", "{", "}",
                   "(", ")", "[", "]", ",", "=", ":", "param", "const", '"', "\n", "block",
                   "program", "\x00", "é"]


def _ckpt_digest(structure, header, data):
    """fw.save's checksum (documented in fw/nn/serialization.py), recomputed so that a
    forged structure gets past it; None if the entries do not describe the data."""
    import ml_dtypes

    codes = {"BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "I16": np.int16,
             "I32": np.int32, "I64": np.int64, "F16": np.float16, "BF16": ml_dtypes.bfloat16,
             "F32": np.float32, "F64": np.float64, "C64": np.complex64, "U16": np.uint16,
             "U32": np.uint32, "U64": np.uint64}
    h = hashlib.sha256(structure.encode("utf-8"))
    for k, e in header.items():
        if k == "__metadata__":
            continue
        try:
            dt = np.dtype(codes[e["dtype"]])
            b, end = e["data_offsets"]
            a = np.frombuffer(data[b:end], dt).reshape(e["shape"])
        except Exception:  # noqa: BLE001  (a mutated entry: no checksum to forge)
            return None
        h.update(k.encode("utf-8"))
        h.update(str(a.dtype).encode("ascii"))
        h.update(str(list(a.shape)).encode("ascii"))
        h.update(a.tobytes())
    return h.hexdigest()


def _mutate_json_value(draw, st, v, depth=0):
    """A structure-aware change of one place in a JSON value."""
    if isinstance(v, dict) and v and depth < 6 and draw(st.booleans()):
        k = draw(st.sampled_from(sorted(v, key=str)))
        v = dict(v)
        v[k] = _mutate_json_value(draw, st, v[k], depth + 1)
        return v
    if isinstance(v, list) and v and depth < 6 and draw(st.booleans()):
        i = draw(st.integers(0, len(v) - 1))
        v = list(v)
        v[i] = _mutate_json_value(draw, st, v[i], depth + 1)
        return v
    n = draw(st.integers(0, 40))
    return draw(st.sampled_from([
        None, True, 0, -1, 2 ** 64, 1.5, float(n), "", "x" * n, [], {}, [v, v], {"": v},
        {"__tensor__": "nope"}, {"__dict__": n}, {"__list__": {"a": v}}, {"__float__": "nan"},
        {"__float__": [n]}, {"__tuple__": [v] * (n % 5)}, {"__npscalar__": "model.weight"},
        {"__ndarray__": ["x"]}, {"__dict__": [[{"__list__": []}, v]]},
        {"__dict__": [[[1, 2], v]]}, {"__tensor__": "model.weight", "stop_gradient": "no"},
        {"__tensor__": "model.weight", "name": [1]}, "[" * n, n, -n, [v] * (n % 4),
    ]))


def _deep(n, open_, close):
    return open_ * n + "1" + close * n


def mutate(draw, st, raw, kind):
    """`raw` (a seed file's bytes) with 1-3 structure-aware mutations. Returns (bytes,
    touched_weights, forged_checksum)."""
    header, data = _split(raw)
    seed_header = _split(raw)[0]  # entry mutations start from the seed's entry
    touched_weights = forged = False
    hlen = None  # None: the real length of the new header
    pad = True
    entries = [k for k in header if k != "__metadata__"]
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
        op = draw(st.sampled_from(["weights", "weights", "meta", "meta", "meta", "entry",
                                   "entry", "hlen", "truncate", "flip", "deep", "header_json",
                                   "append"]))
        if op == "hlen":
            hlen = draw(st.sampled_from(_INTS + [len(raw), len(raw) - 8, 2, 3]))
        elif op == "truncate":
            data = data[:draw(st.integers(0, max(0, len(data) - 1)))]
            touched_weights = True
        elif op == "append":
            data += draw(st.binary(min_size=1, max_size=64))
            touched_weights = True
        elif op in ("flip", "weights") and data:
            data = bytearray(data)
            for _ in range(draw(st.integers(1, 4))):
                i = draw(st.integers(0, len(data) - 1))
                data[i] ^= draw(st.integers(1, 255))
            data = bytes(data)
            touched_weights = True
        elif op == "entry" and entries:
            k = draw(st.sampled_from(entries))
            e = dict(seed_header[k])
            field = draw(st.sampled_from(["dtype", "shape", "data_offsets", "drop", "add"]))
            if field == "dtype":
                e["dtype"] = draw(st.sampled_from(_DTYPES))
            elif field == "shape":
                s = list(e["shape"])
                e["shape"] = draw(st.sampled_from([
                    s + [1], s[:-1], [x * 2 for x in s], [0] + s, [-1] + s, [2 ** 40] + s,
                    [1] * 65, [1] * 64 + s, ["a"], [[1]], [1.5], None, [0, 2 ** 63],
                    s[::-1], [draw(st.sampled_from(_INTS))] + s]))
            elif field == "data_offsets":
                b, end = e["data_offsets"]
                e["data_offsets"] = draw(st.sampled_from([
                    [end, b], [b + 1, end + 1], [b, end - 1], [0, 0], [2 ** 63, 2 ** 64],
                    [-1, end], [b], "x", [b, end, 0], [b, draw(st.sampled_from(_INTS))],
                    [0, len(data)]]))
            elif field == "drop":
                e.pop(draw(st.sampled_from(sorted(e))))
            else:
                e[draw(st.sampled_from(["extra", "dtype2", ""]))] = 1
            header[k] = e
        elif op == "meta":
            meta = header.get("__metadata__")
            meta = dict(meta) if isinstance(meta, dict) else {}
            if not meta:
                meta = {"fw.format": "1"}
            k = draw(st.sampled_from(sorted(meta)))
            v = meta[k]
            how = draw(st.sampled_from(["json", "text", "drop", "type", "deep"]))
            if how == "json" and isinstance(v, str) and v[:1] in "[{":
                try:
                    meta[k] = json.dumps(_mutate_json_value(draw, st, json.loads(v)))
                except (ValueError, RecursionError):  # an earlier mutation broke or deepened it
                    pass
            elif how in ("text", "json") and isinstance(v, str):
                toks = _PROGRAM_TOKENS if k == "program" else [
                    "{", "}", "[", "]", ",", ":", '"', "0", "1e999", "null", "-", "\\u0000"]
                i = draw(st.integers(0, len(v)))
                j = draw(st.integers(i, min(len(v), i + 40)))
                if k == "program" and draw(st.booleans()):
                    lines = v.split("\n")
                    a, b = draw(st.integers(0, len(lines) - 1)), draw(
                        st.integers(0, len(lines) - 1))
                    lines[a], lines[b] = lines[b], lines[a]
                    if draw(st.booleans()):
                        del lines[a]
                    meta[k] = "\n".join(lines)
                else:
                    meta[k] = v[:i] + draw(st.sampled_from(toks)) + v[j:]
            elif how == "drop":
                meta.pop(k)
            elif how == "type":
                meta[k] = draw(st.sampled_from([5, None, [v], {"v": v}, True]))
            else:
                n = draw(st.sampled_from([10, 100, 1000, 10_000, 100_000]))
                meta[k] = _deep(n, '{"__list__":[', "]}") if k == "fw.structure" else _deep(
                    n, "[", "]")
            header["__metadata__"] = meta
            if kind == "checkpoint" and "fw.structure" in meta and draw(st.booleans()):
                # recompute the checksum: only the structure's own checks remain
                d = _ckpt_digest(str(meta["fw.structure"]), header, data)
                if d is not None:
                    meta["fw.checksum"] = d
                    forged = True
        elif op == "deep":
            n = draw(st.sampled_from([50, 1000, 100_000]))
            k = draw(st.sampled_from(entries + ["__metadata__", "x"]))
            header[k] = json.loads(_deep(min(n, 500), "[", "]")) if n <= 500 else None
            if n > 500:  # too deep for json.dumps: splice the text in instead
                h = json.dumps({"x": 0}).encode().replace(b"0", _deep(n, "[", "]").encode())
                return struct.pack("<Q", len(h)) + h + data, touched_weights, forged
        elif op == "header_json":
            how = draw(st.sampled_from(["list", "junk_key", "bom", "spaces", "dup"]))
            h = _join(header, b"", pad)[8:]
            if how == "list":
                h = b"[" + h + b"]"
            elif how == "junk_key":
                header[draw(st.sampled_from(["", "__metadata__ ", "\u00e9", "a" * 300]))] = {}
                continue
            elif how == "bom":
                h = b"\xef\xbb\xbf" + h
            elif how == "spaces":
                h = h + b" " * draw(st.integers(1, 20))
            else:
                h = h[:-1] + b',"' + (entries[0].encode() if entries else b"a") + b'":5}'
            n = len(h) if hlen is None else hlen
            return struct.pack("<Q", n % 2 ** 64) + h + data, touched_weights, forged
    out = _join(header, data, pad)
    if hlen is not None:
        out = struct.pack("<Q", hlen % 2 ** 64) + out[8:]
    return out, touched_weights, forged


# ------------------------------------------------------------------ the campaign
class Campaign:
    """Counts outcomes per loader; `failures` lists what must not happen."""

    def __init__(self, workdir, worker):
        self.dir, self.worker = workdir, worker
        self.seeds = make_seeds(workdir)
        self.ref = {}
        for name, (path, loaders) in self.seeds.items():
            for loader in loaders:
                ans = self.worker.ask(loader, path)
                assert ans["kind"] == "ok", f"the seed {name} does not load with {loader}: {ans}"
                self.ref[loader, name] = ans["digest"]
        self.counts = Counter()
        self.failures = []
        self.silent_model_loads = 0
        self.n = 0

    def one(self, loader, name, data_strategy_draw, st):
        path, _ = self.seeds[name]
        with open(path, "rb") as f:
            raw = f.read()
        mutated, touched, forged = mutate(data_strategy_draw, st, raw,
                                          "checkpoint" if name == "checkpoint" else name)
        self.n += 1
        mpath = os.path.join(self.dir, f"m{self.n % 4}_{os.path.basename(path)}")
        with open(mpath, "wb") as f:
            f.write(mutated)
        ans = self.worker.ask(loader, mpath)
        kind = ans["kind"]
        self.counts[loader, kind] += 1
        bad = None
        if kind in ("crash", "hang", "uncaught"):
            bad = kind
        elif kind == "fw_error" and not ans["names_file"]:
            bad = "error without the file name"
        elif kind == "ok" and touched and not forged and ans["digest"] != self.ref[loader, name]:
            if name == "checkpoint":  # fw.save's checksum must catch it
                bad = "silent wrong load"
            elif name == "safetensors":
                pass  # a plain safetensors file has no checksum: nothing can tell
            else:
                self.silent_model_loads += 1
                if MODEL_FILES_HAVE_CHECKSUM:
                    bad = "silent wrong load"
        if bad is not None:
            keep = os.path.join(self.dir, f"fail{len(self.failures)}_{os.path.basename(path)}")
            os.replace(mpath, keep)
            self.failures.append({"loader": loader, "seed": name, "what": bad, "answer": ans,
                                  "file": keep})

    def run(self, examples, seed=None, derandomize=False):
        """`examples` hypothesis examples for every (loader, seed file)."""
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import seed as hseed
        from hypothesis import strategies as st

        def campaign(loader, name):
            @settings(max_examples=examples, derandomize=derandomize, database=None,
                      deadline=None, phases=[Phase.generate],
                      suppress_health_check=list(HealthCheck))
            @given(st.data())
            def fuzz(data):
                self.one(loader, name, data.draw, st)

            return fuzz if seed is None or derandomize else hseed(seed)(fuzz)

        for name, (_, loaders) in self.seeds.items():
            for loader in loaders:
                campaign(loader, name)()

    def report(self, seconds):
        by_loader = {}
        for (loader, kind), n in sorted(self.counts.items()):
            by_loader.setdefault(loader, {})[kind] = n
        return {"attempts": self.n, "seconds": round(seconds, 1), "outcomes": by_loader,
                "failures": len(self.failures),
                "silent_wrong_model_loads": self.silent_model_loads,
                "worker_starts": self.worker.starts,
                "MODEL_FILES_HAVE_CHECKSUM": MODEL_FILES_HAVE_CHECKSUM}


def main(argv):
    budget = argv[0] if argv else "300"
    worker = Worker()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fw-fuzz-") as d:
        c = Campaign(d, worker)
        try:
            if budget.endswith("x"):
                c.run(int(budget[:-1]), seed=0)
            else:
                rnd = 0
                while time.perf_counter() - t0 < float(budget):
                    c.run(100, seed=rnd)
                    rnd += 1
        finally:
            worker.close()
        rep = c.report(time.perf_counter() - t0)
        print(json.dumps(rep, indent=1))
        keep = tempfile.mkdtemp(prefix="fw-fuzz-failures-") if c.failures else None
        for f in c.failures:
            f["file"] = os.path.join(keep, os.path.basename(f["file"]))
            os.replace(os.path.join(d, os.path.basename(f["file"])), f["file"])
        for f in c.failures[:20]:
            print("FAILURE", json.dumps(f))
    return 1 if c.failures else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker_main(int(sys.argv[2]))
    else:
        sys.exit(main(sys.argv[1:]))
