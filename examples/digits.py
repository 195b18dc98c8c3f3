"""Handwritten digits with a LeNet: train eagerly, export, serve with fw.inference.

The main job of fw, end to end:

1. **train** a LeNet-style convnet (fw.nn.Conv2D, MaxPool2D, Linear, ReLU) with
   fw.optimizer.Adam on batches from fw.io.DataLoader;
2. **evaluate** it on the held-out test split (goal: >= 97% accuracy);
3. **export** it: fw.jit.to_static, then fw.jit.save writes one model file;
4. **predict_with_inference**: fw.inference's Config + create_predictor load that
   file alone (no fw.nn, no Python model code) and predict the test set; the
   accuracy must equal the eager one, and the per-batch latencies of eager and
   Predictor are printed side by side.

Steps 3-4 run only when fw.jit and fw.inference import; otherwise one line says so
and the script ends after step 2 with exit status 0.

Data: scikit-learn's bundled 8x8 UCI digits (1,797 images, no download) upscaled
to MNIST's 28x28 (see examples/_data.py), 80/20 train/test split; ``--data mnist``
trains on the real MNIST instead (downloaded once, checksum-verified). Run:

    PYTHONPATH=packages/fw-core/src:packages/fw-autograd/src:packages/fw-nn/src \\
        python examples/digits.py            # the default: >= 97% test accuracy
    python examples/digits.py --quick        # CI-sized: a few seconds, still learns
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

import fw
import fw.nn as nn
import fw.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _data import MNIST_URL, ArrayDataset, load_digits_dataset, load_mnist  # noqa: E402


class LeNet(nn.Layer):
    """LeNet-5 as in LeCun et al. (1998), with ReLU and max pooling: 28x28 -> 10 logits.

    For 8x8 inputs (``--size 8``) the first convolution keeps the size (padding 2)
    and the second one is padded too, so the flattened features are 16x2x2.
    """

    def __init__(self, size=28, num_classes=10):
        super().__init__()
        pad2 = 0 if size == 28 else 2
        self.features = nn.Sequential(
            nn.Conv2D(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 16, 5, padding=pad2), nn.ReLU(), nn.MaxPool2D(2, 2))
        side = (size // 2 - 4 + 2 * pad2) // 2
        self.classifier = nn.Sequential(
            nn.Linear(16 * side * side, 120), nn.ReLU(),
            nn.Linear(120, 84), nn.ReLU(),
            nn.Linear(84, num_classes))

    def forward(self, x):
        return self.classifier(fw.flatten(self.features(x), 1))


# ---------------------------------------------------------------- the four steps
def train(model, loader, epochs, lr, log=print, test_loader=None):
    """Train with Adam and softmax cross entropy.

    Returns:
        a dict: ``losses`` (mean loss per epoch), ``epoch_times`` (seconds each),
        ``test_acc`` (per epoch, when a test loader is given).
    """
    opt = fw.optimizer.Adam(learning_rate=lr, parameters=model.parameters())
    losses, times, accs = [], [], []
    for epoch in range(1, epochs + 1):
        model.train()
        t0 = time.perf_counter()
        total, n = 0.0, 0
        for images, labels in loader:
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            opt.step()
            opt.clear_grad()
            total += float(loss) * labels.shape[0]
            n += labels.shape[0]
        times.append(time.perf_counter() - t0)
        losses.append(total / n)
        msg = f"epoch {epoch:3d}  loss {losses[-1]:.4f}  {times[-1]:6.2f} s"
        if test_loader is not None:
            accs.append(evaluate(model, test_loader)["accuracy"])
            msg += f"  test accuracy {accs[-1]:.2%}"
        log(msg)
    return {"losses": losses, "epoch_times": times, "test_acc": accs}


def evaluate(model, loader):
    """Accuracy of `model` on `loader`, and the eager forward latency per batch.

    Returns:
        a dict: ``accuracy``, ``predictions`` (int array), ``batch_ms`` (median ms).
    """
    model.eval()
    preds, correct, n, lat = [], 0, 0, []
    with fw.no_grad():
        for images, labels in loader:
            t0 = time.perf_counter()
            logits = model(images)
            lat.append(time.perf_counter() - t0)
            p = logits.numpy().argmax(-1)
            preds.append(p)
            correct += int((p == labels.numpy()).sum())
            n += labels.shape[0]
    return {"accuracy": correct / n, "predictions": np.concatenate(preds),
            "batch_ms": 1e3 * float(np.median(lat))}


def export(model, path, size):
    """Convert `model` with fw.jit.to_static and write it with fw.jit.save.

    Returns:
        the model file's path.
    """
    import fw.jit
    from fw.static import InputSpec

    model.eval()
    spec = [InputSpec([None, 1, size, size], "float32", name="image")]
    static = fw.jit.to_static(model, input_spec=spec)
    return fw.jit.save(static, path, input_spec=spec)


def predict_with_inference(model_file, dataset, batch_size, threads=None):
    """Predict `dataset` with fw.inference alone: Config + create_predictor.

    Only NumPy arrays go in and out: nothing of fw.nn or of the model's Python
    code is used.

    Returns:
        a dict: ``accuracy``, ``predictions``, ``batch_ms`` (median ms per batch).
    """
    import fw.inference as infer

    config = infer.Config(model_file)
    if threads is not None:  # default: the threads eager mode uses too (all cores)
        config.set_cpu_math_library_num_threads(threads)
    predictor = infer.create_predictor(config)
    images, labels = dataset.images, dataset.labels
    preds, lat = [], []
    for i in range(0, len(labels), batch_size):
        x = images[i:i + batch_size]
        t0 = time.perf_counter()
        (logits,) = predictor.run([x])
        lat.append(time.perf_counter() - t0)
        preds.append(np.asarray(logits).argmax(-1))
    preds = np.concatenate(preds)
    return {"accuracy": float((preds == labels).mean()), "predictions": preds,
            "batch_ms": 1e3 * float(np.median(lat))}


def _deploy_available():
    try:
        import fw.inference  # noqa: F401
        import fw.jit  # noqa: F401
    except ImportError as e:
        return str(e)
    return None


# ---------------------------------------------------------------- the script
def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="CI-sized run: 3 epochs on a 600-image subset")
    ap.add_argument("--epochs", type=int, default=None, help="default 12 (quick: 3)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=0, help="weights and batch order")
    ap.add_argument("--num-workers", type=int, default=0,
                    help="DataLoader worker processes (0: load in the main process)")
    ap.add_argument("--data", choices=["digits", "mnist"], default="digits")
    ap.add_argument("--size", type=int, choices=[8, 28], default=28,
                    help="digits: upscale the 8x8 images to 28x28 (default) or keep 8x8")
    ap.add_argument("--mnist-root", default=os.path.join(os.path.expanduser("~"), ".cache",
                                                         "fw", "mnist"))
    ap.add_argument("--mnist-url", default=MNIST_URL)
    ap.add_argument("--export-dir", default=None,
                    help="where the model file goes (default: a temporary directory)")
    ap.add_argument("--no-export", action="store_true", help="skip steps 3-4")
    return ap.parse_args(argv)


def load_data(args):
    if args.data == "mnist":
        train_ds = load_mnist(args.mnist_root, "train", url=args.mnist_url)
        test_ds = load_mnist(args.mnist_root, "test", url=args.mnist_url)
        size = 28
    else:
        train_ds = load_digits_dataset("train", upscale=args.size == 28)
        test_ds = load_digits_dataset("test", upscale=args.size == 28)
        size = args.size
    if args.quick:  # a fixed subset: every quick run sees the same images
        train_ds = ArrayDataset(train_ds.images[:600], train_ds.labels[:600])
    return train_ds, test_ds, size


def main(argv=None):
    """Run the example; returns its figures as a dict (the tests assert on them)."""
    args = parse_args(argv)
    epochs = args.epochs if args.epochs is not None else (3 if args.quick else 12)
    fw.seed(args.seed)          # weights
    np.random.seed(args.seed)   # fw.io's samplers draw from NumPy's global state

    train_ds, test_ds, size = load_data(args)
    print(f"data: {args.data} {size}x{size}, {len(train_ds)} train / {len(test_ds)} test images")
    train_loader = fw.io.DataLoader(train_ds, batch_size=args.batch_size, shuffle=True,
                                    num_workers=args.num_workers)
    test_loader = fw.io.DataLoader(test_ds, batch_size=64)
    model = LeNet(size)
    n_params = sum(int(np.prod(p.shape)) for p in model.parameters())
    print(f"model: LeNet, {n_params:,} parameters; Adam lr {args.lr}, batch {args.batch_size}, "
          f"{epochs} epochs, {args.num_workers} loader workers")

    t0 = time.perf_counter()
    hist = train(model, train_loader, epochs, args.lr, test_loader=test_loader)
    train_s = time.perf_counter() - t0
    eager = evaluate(model, test_loader)
    reached = next((i + 1 for i, a in enumerate(hist["test_acc"]) if a >= 0.97), None)
    print(f"eager: test accuracy {eager['accuracy']:.2%} after {epochs} epochs in "
          f"{train_s:.1f} s ({np.mean(hist['epoch_times']):.2f} s/epoch); "
          + (f"97% first reached after epoch {reached}" if reached else "97% not reached"))
    result = {"accuracy": eager["accuracy"], "losses": hist["losses"],
              "epoch_times": hist["epoch_times"], "test_acc": hist["test_acc"],
              "train_seconds": train_s, "eager_batch_ms": eager["batch_ms"],
              "epochs_to_97": reached, "inference": None}

    if args.no_export:
        return result
    missing = _deploy_available()
    if missing is not None:
        print(f"export skipped: fw.jit / fw.inference are not installed ({missing})")
        return result
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(args.export_dir or tmp, "lenet_digits")
        model_file = export(model, prefix, size)
        served = predict_with_inference(model_file, test_ds, batch_size=64)
    agree = float((served["predictions"] == eager["predictions"]).mean())
    print(f"exported {os.path.basename(model_file)}; Predictor: test accuracy "
          f"{served['accuracy']:.2%}, predictions equal to eager for {agree:.2%} of images")
    print(f"latency per batch of 64: eager {eager['batch_ms']:.2f} ms, "
          f"Predictor {served['batch_ms']:.2f} ms")
    result["inference"] = {"accuracy": served["accuracy"], "agreement": agree,
                           "batch_ms": served["batch_ms"]}
    return result


if __name__ == "__main__":
    main()
