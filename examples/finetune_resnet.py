"""Fine-tune a pretrained ResNet-18 on a small data set, export it, serve it.

Transfer learning as a Paddle user does it, with fw:

1. **weights**: ``fw.hub.load(weights_dir, "resnet18", source="local")`` builds
   fw.vision's ResNet-18 and loads the ``resnet18.pdparams`` kept in that directory
   (Paddle's own file format, read by a restricted unpickler: no code runs);
   ``--pretrained`` instead takes Paddle's published ImageNet weights through
   fw.hub's cache (``fw.vision.models.resnet18(pretrained=True)``: the internet
   once, or ``FW_HUB_MIRRORS`` / an offline cache). Without either (CI has no
   internet) the script writes a stand-in ``resnet18.pdparams`` into a temporary
   hub directory: a seeded, *untrained* ResNet-18 with batch-norm statistics
   measured on the images — the loading path is the real one, the features are
   random (a linear probe on them still reaches ~70 % on the digits; Paddle's
   ImageNet weights do better).
2. **new head**: the 1000-class ``fc`` is replaced by a fresh ``Linear(512, n)``
   for the target classes (the digits 0-9, or every class of an
   ``--image-folder`` tree read with ``fw.vision.datasets.DatasetFolder``).
3. **fine-tune** with Adam on ``fw.io.DataLoader`` batches: the head only, the
   backbone frozen in eval mode (the default, "feature extraction"), or every
   layer with ``--train-all``; evaluate on held-out images.
4. **export** with ``fw.jit.to_static`` + ``fw.jit.save``, then **predict** with
   ``fw.inference``'s Predictor (Config + create_predictor: only the model file);
   its predictions must equal the eager model's.

Data: scikit-learn's bundled 8x8 digits (no download), upscaled to ``--size``
pixels, repeated to 3 channels and normalised as ImageNet weights expect.
``--small`` is the CI size (12x12 images, 24 steps, 200 test images). Run:

    python examples/finetune_resnet.py --small
    python examples/finetune_resnet.py --weights-dir DIR   # DIR/resnet18.pdparams
    python examples/finetune_resnet.py --pretrained        # Paddle's ImageNet weights
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
import time

import numpy as np

import fw
import fw.nn.functional as F
from fw import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _data import ArrayDataset, load_digits_dataset, resize_bilinear  # noqa: E402

# ---------------------------------------------------------------- data
# ImageNet's channel statistics: the normalisation Paddle's pretrained weights expect
MEAN = np.array([0.485, 0.456, 0.406], np.float32)[:, None, None]
STD = np.array([0.229, 0.224, 0.225], np.float32)[:, None, None]


def digits_rgb(split, size, classes):
    """The digits of `classes` as ``[N, 3, size, size]`` float32 images (ImageNet's
    normalisation) and labels renumbered 0..len(classes)-1."""
    ds = load_digits_dataset(split, upscale=False)
    keep = np.isin(ds.labels, classes)
    images = resize_bilinear(ds.images[keep, 0], size)
    images = (np.repeat(images[:, None], 3, axis=1) - MEAN) / STD  # grey -> RGB
    labels = np.searchsorted(np.asarray(classes), ds.labels[keep])
    return ArrayDataset(images.astype(np.float32), labels)


def image_folder(root, size):
    """Every image under ``root/<class>/`` as an `ArrayDataset` (80/20 split)."""
    # DatasetFolder gives (image, class index) samples; Paddle's ImageFolder gives
    # unlabelled images
    from fw.vision.datasets import DatasetFolder

    folder = DatasetFolder(root)
    images, labels = [], []
    for i in range(len(folder)):
        img, label = folder[i]
        arr = np.asarray(img.convert("RGB").resize((size, size)), np.float32) / 255.0
        images.append((arr.transpose(2, 0, 1) - MEAN) / STD)
        labels.append(label)
    images, labels = np.stack(images).astype(np.float32), np.asarray(labels, np.int64)
    order = np.random.default_rng(0).permutation(len(labels))
    cut = int(len(labels) * 0.8)
    n_classes = len(folder.classes)
    return (ArrayDataset(images[order[:cut]], labels[order[:cut]]),
            ArrayDataset(images[order[cut:]], labels[order[cut:]]), n_classes)


# ---------------------------------------------------------------- weights
def save_pdparams(state_dict, path):
    """Write a state dict as Paddle's ``.pdparams`` (a pickle of name -> ndarray),
    the file format of Paddle's model zoo; fw.load reads it without running code."""
    arrays = {k: np.asarray(v.numpy()) for k, v in state_dict.items()}
    with open(path, "wb") as f:
        pickle.dump(arrays, f, protocol=4)
    return path


def write_standin_weights(hub_dir, images, seed):
    """A seeded, untrained ResNet-18 saved as ``hub_dir/resnet18.pdparams`` (and
    returned): the stand-in for a downloaded weights file where there is no internet.
    Its batch-norm statistics are measured on `images` (one forward pass in training
    mode with momentum 0), as trained weights' would be: without that, the random
    network's eval-mode activations grow through the residual blocks and a linear
    probe on them learns little."""
    from fw.vision.models import resnet18

    fw.seed(seed)
    model = resnet18()
    for layer in model.sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            layer._momentum = 0.0  # running statistics := this batch's statistics
    model.train()
    with fw.no_grad():
        model(fw.to_tensor(images))
    save_pdparams(model.state_dict(), os.path.join(hub_dir, "resnet18.pdparams"))
    return model


def load_backbone(args, log=print):
    """ResNet-18 with pretrained weights, from a hub directory or Paddle's zoo."""
    if args.pretrained:
        from fw.vision.models import resnet18

        log("weights: Paddle's published ImageNet ResNet-18 (fw.hub cache)")
        return resnet18(pretrained=True)
    import fw.hub

    log(f"weights: fw.hub.load({args.weights_dir!r}, 'resnet18', source='local')")
    return fw.hub.load(args.weights_dir, "resnet18", source="local")


# ---------------------------------------------------------------- train / evaluate
def train(model, ds, steps, batch_size, lr, train_all=False, log=print):
    """`steps` Adam steps on shuffled batches of `ds`; returns the losses. Unless
    `train_all`, only ``model.fc`` learns and the backbone stays frozen in eval mode
    (its batch-norm statistics are the pretrained ones)."""
    params = model.parameters() if train_all else model.fc.parameters()
    if not train_all:
        for p in model.parameters():
            p.stop_gradient = True
        for p in params:
            p.stop_gradient = False
    opt = fw.optimizer.Adam(learning_rate=lr, parameters=params)
    loader = fw.io.DataLoader(ds, batch_size=batch_size, shuffle=True, drop_last=True)
    model.train() if train_all else model.eval()
    losses, step = [], 0
    while step < steps:
        for images, labels in loader:
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.append(float(loss))
            step += 1
            if step % max(1, steps // 4) == 0 or step == steps:
                log(f"step {step:3d}  loss {losses[-1]:.4f}")
            if step == steps:
                break
    return losses


def predict(model, ds, batch_size=64):
    model.eval()
    out = []
    with fw.no_grad():
        for i in range(0, len(ds), batch_size):
            out.append(model(fw.to_tensor(ds.images[i:i + batch_size])).numpy())
    return np.concatenate(out)


def export_and_serve(model, ds, path_prefix, size):
    """fw.jit.save the model, then predict `ds` with fw.inference's Predictor."""
    import fw.inference as infer
    import fw.jit
    from fw.static import InputSpec

    model.eval()
    spec = [InputSpec([None, 3, size, size], "float32", name="image")]
    model_file = fw.jit.save(fw.jit.to_static(model, input_spec=spec), path_prefix,
                             input_spec=spec)
    predictor = infer.create_predictor(infer.Config(model_file))
    logits = []
    for i in range(0, len(ds), 64):
        (out,) = predictor.run([ds.images[i:i + 64]])
        logits.append(np.asarray(out))
    return model_file, np.concatenate(logits)


# ---------------------------------------------------------------- the script
def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--weights-dir", default=None,
                     help="a directory holding resnet18.pdparams (default: make one)")
    src.add_argument("--pretrained", action="store_true",
                     help="Paddle's published ImageNet weights through fw.hub's cache")
    ap.add_argument("--image-folder", default=None,
                    help="fine-tune on ROOT/<class>/*.png instead of the digits 5-9")
    ap.add_argument("--small", "--quick", action="store_true",
                    help="CI size: 12x12 images, 24 steps, 200 test images")
    ap.add_argument("--size", type=int, default=None, help="image side (default 32; small 12)")
    ap.add_argument("--steps", type=int, default=None, help="fine-tuning steps (default 150)")
    ap.add_argument("--train-all", action="store_true",
                    help="fine-tune every layer (default: the new head only)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=None,
                    help="Adam learning rate (default 1e-2, with --train-all 1e-3)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--export-dir", default=None,
                    help="where the model file goes (default: a temporary directory)")
    return ap.parse_args(argv)


def main(argv=None, log=print):
    """Run the example; returns its figures as a dict (the test asserts on them)."""
    args = parse_args(argv)
    size = args.size or (12 if args.small else 32)
    steps = args.steps or (24 if args.small else 150)
    lr = args.lr or (1e-3 if args.train_all else 1e-2)
    np.random.seed(args.seed)  # fw.io's shuffling draws from NumPy's global state
    t_start = time.perf_counter()

    with tempfile.TemporaryDirectory() as tmp:
        if args.image_folder:
            train_ds, test_ds, n_classes = image_folder(args.image_folder, size)
        else:
            train_ds = digits_rgb("train", size, list(range(10)))
            test_ds = digits_rgb("test", size, list(range(10)))
            if args.small:  # a fixed subset: every small run sees the same images
                test_ds = ArrayDataset(test_ds.images[:200], test_ds.labels[:200])
            n_classes = 10
        if not args.pretrained and args.weights_dir is None:
            args.weights_dir = os.path.join(tmp, "hub")
            os.makedirs(args.weights_dir)
            write_standin_weights(args.weights_dir, train_ds.images[:128], args.seed)
            log(f"no weights given: wrote stand-in (untrained) weights to {args.weights_dir}")
        model = load_backbone(args, log)
        loaded = {k: v.numpy().copy() for k, v in model.state_dict().items()}
        # the new head: Paddle's ResNet keeps it in `fc` ([in, out] weight)
        fw.seed(args.seed)
        model.fc = nn.Linear(model.fc.weight.shape[0], n_classes)
        model.num_classes = n_classes
        log(f"fine-tuning {'every layer' if args.train_all else 'the head'} on "
            f"{len(train_ds)} images ({n_classes} classes, {size}x{size}), {steps} steps, "
            f"batch {args.batch_size}, Adam lr {lr}")
        t0 = time.perf_counter()
        losses = train(model, train_ds, steps, args.batch_size, lr, args.train_all, log)
        train_s = time.perf_counter() - t0
        logits = predict(model, test_ds)
        acc = float((logits.argmax(-1) == test_ds.labels).mean())
        log(f"eager: test accuracy {acc:.2%} on {len(test_ds)} images "
            f"({train_s:.1f} s fine-tuning)")
        # the backbone is untouched unless every layer was trained
        backbone_kept = all(np.array_equal(v.numpy(), loaded[k])
                            for k, v in model.state_dict().items() if not k.startswith("fc."))

        prefix = os.path.join(args.export_dir or tmp, "resnet18_finetuned")
        model_file, served = export_and_serve(model, test_ds, prefix, size)
        agree = float((served.argmax(-1) == logits.argmax(-1)).mean())
        max_diff = float(np.abs(served - logits).max())
        log(f"exported {os.path.basename(model_file)}; Predictor agrees with eager on "
            f"{agree:.2%} of the test images (max |logit diff| {max_diff:.2e})")
    return {"accuracy": acc, "losses": losses, "agreement": agree, "max_diff": max_diff,
            "test_images": len(test_ds), "classes": n_classes, "loaded": loaded,
            "backbone_kept": backbone_kept, "seconds": time.perf_counter() - t_start}


if __name__ == "__main__":
    main()
