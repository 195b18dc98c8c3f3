"""fw.slim structured pruning: the fw.inference Predictor on the dense model and on
the model with 50 % of its conv channels pruned (`fw.slim.ChannelPruner`, L1).

Target (issue 13): the pruned Predictor >= 1.6x faster than the dense one for the
zoo's LeNet and ResNet-18. Cases: LeNet b64@28, ResNet-18 b16@64 and b1@224. One
oneDNN/BLAS thread, as the other predictor benchmarks (the machine is shared).

``python asv_bench/benchmarks/bench_prune.py [rounds]`` prints the medians of
interleaved runs (dense, pruned, dense, pruned, ...) and their ratio, which is how
the figures in fw-slim's README were taken on a loaded machine;
``... bench_prune.py accuracy`` trains LeNet and ResNet-18 on the digits set,
prunes 50 % of their conv channels and fine-tunes one epoch (the accuracy half of
the target: drop <= 1 point).
"""

import os
import sys
import tempfile
import time

import numpy as np

import fw
import fw.inference as infer
import fw.slim

CASES = {"lenet_b64": ("lenet", 64, None), "resnet18_b16_64": ("resnet18", 16, 64),
         "resnet18_b1_224": ("resnet18", 1, 224)}


def _predictor(directory, case, pruned):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests"))
    import zoo

    name, batch, hw = CASES[case]
    fw.seed(0)
    model = zoo.build(fw, name)
    x = zoo.example_input(fw, name, batch=batch, hw=hw)
    if pruned:
        fw.slim.L1NormFilterPruner(model, [1, *x.shape[1:]]).prune(0.5)
    prefix = os.path.join(directory, f"{case}_{int(pruned)}")
    spec = [fw.static.InputSpec([None, *x.shape[1:]], x.dtype)]
    fw.jit.save(model, prefix, input_spec=spec)
    config = infer.Config(prefix)
    config.disable_glog_info()
    config.set_cpu_math_library_num_threads(1)
    pred = infer.create_predictor(config)
    pred.run([x.numpy()])  # primitives created, weights prepacked
    return pred, x.numpy()


class PrunedPredictor:
    params = (list(CASES), [False, True])
    param_names = ("case", "pruned")
    timeout = 300

    def setup(self, case, pruned):
        self.dir = tempfile.TemporaryDirectory()
        self.pred, self.x = _predictor(self.dir.name, case, pruned)

    def teardown(self, case, pruned):
        self.dir.cleanup()

    def time_run(self, case, pruned):
        self.pred.run([self.x])


def _interleaved(rounds=15, cases=tuple(CASES)):
    """Per case: median seconds per run of dense and pruned, measured alternately,
    their ratio, and the ratio of the fastest runs (less sensitive to other jobs
    on a shared machine)."""
    out = {}
    with tempfile.TemporaryDirectory() as d:
        for case in cases:
            dense, x = _predictor(d, case, False)
            pruned, _ = _predictor(d, case, True)
            t0 = time.perf_counter()
            dense.run([x])
            reps = max(1, int(0.02 / (time.perf_counter() - t0)))  # >= ~20 ms per sample
            times = {False: [], True: []}
            for _ in range(rounds):
                for flag, p in ((False, dense), (True, pruned)):
                    t0 = time.perf_counter()
                    for _ in range(reps):
                        p.run([x])
                    times[flag].append((time.perf_counter() - t0) / reps)
            md, mp = float(np.median(times[False])), float(np.median(times[True]))
            bd, bp = float(np.min(times[False])), float(np.min(times[True]))
            out[case] = (md, mp, md / mp, bd / bp)
    return out


def _digits_accuracy(name, epochs, ft_epochs, lr=0.003, ft_lr=0.001, bs=32, criterion="l1"):
    """Test accuracy on the digits set (examples/_data.py, 28x28) of the zoo model
    `name` (10 classes; ResNet-18 sees the gray image in its 3 channels): trained
    `epochs` with Adam, after pruning 50 % of its conv channels, and after
    `ft_epochs` of fine-tuning. Returns (dense, pruned, fine-tuned)."""
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    sys.path.insert(0, os.path.join(root, "tests"))
    sys.path.insert(0, os.path.join(root, "examples"))
    import zoo
    from _data import load_digits_dataset

    from fw.autograd import no_grad

    tr, te = load_digits_dataset("train"), load_digits_dataset("test")
    reps = 1 if name == "lenet" else 3
    xtr, xte = np.repeat(tr.images, reps, axis=1), np.repeat(te.images, reps, axis=1)
    fw.seed(0)
    model = zoo.build(fw, name, num_classes=10)

    def train(n_epochs, rate):
        opt = fw.optimizer.Adam(learning_rate=rate, parameters=model.parameters())
        model.train()
        rng = np.random.default_rng(0)
        for _ in range(n_epochs):
            idx = rng.permutation(len(tr.labels))
            for i in range(0, len(idx), bs):
                j = idx[i:i + bs]
                loss = fw.nn.functional.cross_entropy(model(fw.to_tensor(xtr[j])),
                                                      fw.to_tensor(tr.labels[j]))
                loss.backward()
                opt.step()
                opt.clear_grad()
        model.eval()

    def accuracy():
        with no_grad():
            hits = [model(fw.to_tensor(xte[i:i + 128])).numpy().argmax(1)
                    == te.labels[i:i + 128] for i in range(0, len(te.labels), 128)]
        return float(np.concatenate(hits).mean())

    train(epochs, lr)
    dense = accuracy()
    fw.slim.ChannelPruner(model, [1, reps, 28, 28], criterion=criterion).prune(0.5)
    pruned = accuracy()
    train(ft_epochs, ft_lr)
    return dense, pruned, accuracy()


if __name__ == "__main__":
    if sys.argv[1:2] == ["accuracy"]:
        for name, ep in (("lenet", 4), ("resnet18", 3)):
            d, p, f = _digits_accuracy(name, ep, 1)
            print(f"{name:9s} digits: dense {d:.4f}  pruned {p:.4f}  fine-tuned (1 epoch) {f:.4f}"
                  f"  drop {100 * (d - f):+.2f} points", flush=True)
        sys.exit(0)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    for case, (md, mp, ratio, best) in _interleaved(n).items():
        print(f"{case:18s} median: dense {md * 1e3:8.2f} ms  pruned {mp * 1e3:8.2f} ms  "
              f"{ratio:.2f}x   (best of runs: {best:.2f}x)")
