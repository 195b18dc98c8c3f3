"""fw.vision.datasets parsing the real file formats from given paths (no download):
samples and labels equal what was written, Paddle's sample types per backend,
truncated / corrupted files fail with errors naming the file, pickles never run code."""

from __future__ import annotations

import gzip
import os
import pathlib
import pickle
import shutil
import sys

import numpy as np
import pytest
from PIL import Image

import fw
from fw.vision import datasets as D

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _vision_dataset_files import write_cifar, write_flowers, write_idx_pair, write_voc  # noqa: E402


@pytest.mark.parametrize("cls", [D.MNIST, D.FashionMNIST])
def test_mnist_samples_equal_what_was_written(tmp_path, cls):
    ip, lp, images, labels = write_idx_pair(str(tmp_path), "t10k", 7)
    ds = cls(ip, lp, mode="test", backend="cv2")
    assert len(ds) == 7
    for i in (0, 3, 6):
        img, lab = ds[i]
        assert img.dtype == np.float32 and img.shape == (28, 28)
        np.testing.assert_array_equal(img, images[i])
        assert lab.dtype == np.int64 and lab.shape == (1,) and lab[0] == labels[i]
    img, lab = cls(ip, lp, backend="pil")[2]
    assert isinstance(img, Image.Image) and img.mode == "L"
    np.testing.assert_array_equal(np.asarray(img), images[2])
    seen = []
    ds = cls(ip, lp, backend="cv2", transform=lambda a: seen.append(a.dtype) or a * 2)
    np.testing.assert_array_equal(ds[1][0], images[1].astype(np.float32) * 2)
    assert seen == [np.float32]


def test_mnist_bad_files_fail_naming_them(tmp_path):
    ip, lp, _, _ = write_idx_pair(str(tmp_path), "train", 5)
    raw = pathlib.Path(ip).read_bytes()
    bad = tmp_path / "trunc.gz"
    bad.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match="MNIST: .*trunc.gz"):
        D.MNIST(str(bad), lp)
    short = tmp_path / "short.gz"
    with gzip.open(short, "wb") as f:
        f.write(gzip.decompress(raw)[:-10])
    with pytest.raises(ValueError, match=r"MNIST: .*short.gz.*\[5, 28, 28\]"):
        D.MNIST(str(short), lp)
    with pytest.raises(ValueError, match="magic number 2051"):
        D.MNIST(lp, lp)
    _, lp3, _, _ = write_idx_pair(str(tmp_path), "other", 3)
    with pytest.raises(ValueError, match="5 images but .* 3 labels"):
        D.MNIST(ip, lp3)
    with pytest.raises(FileNotFoundError, match="MNIST: argument 'image_path'"):
        D.MNIST(str(tmp_path / "nope.gz"), lp)
    with pytest.raises(ValueError, match="MNIST: argument 'image_path' is not set and "
                                         "download=False"):
        D.MNIST(None, lp, download=False)
    with pytest.raises(ValueError, match="MNIST: argument 'mode'"):
        D.MNIST(ip, lp, mode="valid")
    with pytest.raises(ValueError, match="MNIST: argument 'backend'"):
        D.MNIST(ip, lp, backend="tensor")


@pytest.mark.parametrize("hundred", [False, True])
def test_cifar_samples_equal_what_was_written(tmp_path, hundred):
    pytest.importorskip("fw.nn.safe_pickle", reason="fw-nn's restricted unpickler (hubcore)")
    path = str(tmp_path / "cifar.tar.gz")
    written = write_cifar(path, hundred)
    cls = D.Cifar100 if hundred else D.Cifar10
    for mode in ("train", "test"):
        images, labels = written[mode]
        ds = cls(path, mode=mode, backend="cv2")
        assert len(ds) == len(labels)
        for i in range(len(ds)):
            img, lab = ds[i]
            assert img.dtype == np.float32 and img.shape == (32, 32, 3)
            np.testing.assert_array_equal(img, images[i])
            assert lab.dtype == np.int64 and lab.shape == () and lab == labels[i]
    img, lab = cls(path, mode="test", backend="pil")[0]
    assert isinstance(img, Image.Image) and img.size == (32, 32) and img.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(img), written["test"][0][0])


class _Boom:
    def __reduce__(self):
        return (os.system, ("touch SHOULD_NOT_EXIST",))


def test_cifar_hostile_pickle_is_refused_without_running(tmp_path, monkeypatch):
    safe_pickle = pytest.importorskip("fw.nn.safe_pickle")
    monkeypatch.chdir(tmp_path)
    path = str(tmp_path / "evil.tar.gz")
    write_cifar(path, payload=pickle.dumps({b"data": _Boom()}, protocol=2))
    with pytest.raises(safe_pickle.UnsafePickleError, match="system"):
        D.Cifar10(path, mode="train")
    assert not (tmp_path / "SHOULD_NOT_EXIST").exists()


def test_cifar_corrupt_archive_fails_closed(tmp_path):
    pytest.importorskip("fw.nn.safe_pickle")
    path = tmp_path / "cifar.tar.gz"
    write_cifar(str(path))
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 3])
    with pytest.raises(ValueError, match="Cifar10: .*cifar.tar.gz"):
        D.Cifar10(str(path))


@pytest.mark.parametrize("mode, flag", [("train", "tstid"), ("test", "trnid"),
                                        ("valid", "valid")])
def test_flowers_modes_labels_images(tmp_path, mode, flag):
    tgz, lab, setid, decoded, labels, split = write_flowers(str(tmp_path))
    ds = D.Flowers(tgz, lab, setid, mode=mode, backend="cv2")
    ids = split[flag].ravel()
    assert len(ds) == len(ids)
    for k, idx in enumerate(ids):
        img, label = ds[k]
        assert img.dtype == np.float32
        np.testing.assert_array_equal(img, decoded[idx])
        assert label.dtype == np.int64 and label.tolist() == [labels[idx - 1]]
    img, _ = D.Flowers(tgz, lab, setid, mode=mode, backend="pil")[0]
    assert isinstance(img, Image.Image)
    np.testing.assert_array_equal(np.asarray(img), decoded[ids[0]])


def test_flowers_extracts_only_image_members(tmp_path):
    import io
    import tarfile

    tgz, lab, setid, *_ = write_flowers(str(tmp_path))
    evil = str(tmp_path / "evil.tgz")
    with tarfile.open(tgz) as src, tarfile.open(evil, "w:gz") as dst:
        for m in src:
            dst.addfile(m, src.extractfile(m))
        info = tarfile.TarInfo("../escaped.txt")
        info.size = 3
        dst.addfile(info, io.BytesIO(b"bad"))
    D.Flowers(evil, lab, setid)
    assert not (tmp_path / "escaped.txt").exists()
    assert sorted(os.listdir(tmp_path / "evil")) == ["jpg"]


@pytest.mark.parametrize("mode, flag", [("train", "trainval"), ("test", "train"),
                                        ("valid", "val")])
def test_voc2012_samples(tmp_path, mode, flag):
    path = str(tmp_path / "VOCtrainval_11-May-2012.tar")
    ids, lists, samples = write_voc(path)
    ds = D.VOC2012(path, mode=mode, backend="cv2")
    assert len(ds) == len(lists[flag])
    for k, i in enumerate(lists[flag]):
        img, label = ds[k]
        assert img.dtype == np.float32 and label.dtype == np.float32
        np.testing.assert_array_equal(img, samples[i][0])
        np.testing.assert_array_equal(label, samples[i][1])
    img, label = D.VOC2012(path, mode=mode, backend="pil")[0]
    assert isinstance(img, Image.Image) and label.mode == "P"
    np.testing.assert_array_equal(np.asarray(label), samples[lists[flag][0]][1])


def test_voc2012_not_a_voc_archive(tmp_path):
    path = str(tmp_path / "x.tar")
    write_cifar(path.replace(".tar", ".tgz"))
    import tarfile

    with tarfile.open(path, "w"):
        pass
    with pytest.raises(ValueError, match="VOC2012: .*x.tar has no .*trainval.txt"):
        D.VOC2012(path)


@pytest.fixture
def tree(tmp_path):
    rng = np.random.default_rng(0)
    made = {}
    for cls, names in {"b_dog": ["x.png", "y.PNG", "note.txt"], "a_cat": ["z.png"],
                       "c_empty": []}.items():
        os.makedirs(tmp_path / cls)
        for n in names:
            p = tmp_path / cls / n
            if n.endswith(".txt"):
                p.write_text("not an image")
                continue
            arr = rng.integers(0, 256, (3, 4, 3), dtype=np.uint8)
            Image.fromarray(arr).save(p, format="PNG")
            made[str(p)] = arr
    os.makedirs(tmp_path / "a_cat" / "sub")
    arr = rng.integers(0, 256, (2, 2, 3), dtype=np.uint8)
    Image.fromarray(arr).save(tmp_path / "a_cat" / "sub" / "w.png")
    made[str(tmp_path / "a_cat" / "sub" / "w.png")] = arr
    return tmp_path, made


def test_dataset_folder_like_paddle(tree):
    root, made = tree
    ds = D.DatasetFolder(str(root))
    assert ds.classes == ["a_cat", "b_dog", "c_empty"]
    assert ds.class_to_idx == {"a_cat": 0, "b_dog": 1, "c_empty": 2}
    assert [os.path.relpath(p, root) for p, _ in ds.samples] == [
        "a_cat/z.png", "a_cat/sub/w.png", "b_dog/x.png", "b_dog/y.PNG"]
    assert ds.targets == [0, 0, 1, 1]
    for i, (p, t) in enumerate(ds.samples):
        img, target = ds[i]
        assert isinstance(img, Image.Image) and img.mode == "RGB" and target == t
        np.testing.assert_array_equal(np.asarray(img), made[p])
    only_txt = D.DatasetFolder(str(root), extensions=(".txt",),
                               loader=lambda p: pathlib.Path(p).read_text())
    assert only_txt[0] == ("not an image", 1)
    picked = D.DatasetFolder(str(root), is_valid_file=lambda p: p.endswith("x.png"))
    assert [os.path.basename(p) for p, _ in picked.samples] == ["x.png"]
    arrays = D.DatasetFolder(str(root), transform=lambda im: np.asarray(im).sum())
    assert arrays[0][0] == made[arrays.samples[0][0]].sum()


def test_image_folder_and_cv2_backend(tree):
    root, made = tree
    ds = D.ImageFolder(str(root))
    assert len(ds) == 4 and all(isinstance(s, str) for s in ds.samples)
    (img,) = ds[0]
    np.testing.assert_array_equal(np.asarray(img), made[ds.samples[0]])
    fw.vision.set_image_backend("cv2")
    try:
        (arr,) = ds[1]
        assert isinstance(arr, np.ndarray) and arr.dtype == np.uint8
        np.testing.assert_array_equal(arr, made[ds.samples[1]])  # RGB, as Paddle's loader
    finally:
        fw.vision.set_image_backend("pil")


def test_folder_errors(tree, tmp_path):
    root, _ = tree
    with pytest.raises(RuntimeError, match="DatasetFolder: found 0 files"):
        D.DatasetFolder(str(root), extensions=(".gif",))
    with pytest.raises(FileNotFoundError, match="ImageFolder: argument 'root'"):
        D.ImageFolder(str(tmp_path / "missing"))
    with pytest.raises(TypeError, match="DatasetFolder: argument 'extensions'"):
        D.DatasetFolder(str(root), extensions=".png")
    with pytest.raises(TypeError, match="ImageFolder: argument 'is_valid_file'"):
        D.ImageFolder(str(root), is_valid_file="yes")


def test_datasets_feed_a_dataloader_and_pickle_for_workers(tmp_path):
    ip, lp, images, labels = write_idx_pair(str(tmp_path), "train", 6)
    loader = fw.io.DataLoader(D.MNIST(ip, lp, backend="cv2"), batch_size=4, shuffle=False)
    x, y = next(iter(loader))
    assert x.shape == [4, 28, 28] and str(x.dtype).endswith("float32")
    assert y.shape == [4, 1] and y.numpy().ravel().tolist() == labels[:4].tolist()
    np.testing.assert_array_equal(x.numpy(), images[:4])
    # a worker process gets the dataset pickled: the open tar handle is not carried over
    path = str(tmp_path / "voc.tar")
    ids, lists, samples = write_voc(path)
    voc = D.VOC2012(path, mode="valid", backend="cv2")
    voc[0]
    clone = pickle.loads(pickle.dumps(voc))
    np.testing.assert_array_equal(clone[0][1], samples[lists["val"][0]][1])


def test_transforms_that_return_tensors_keep_them(tmp_path):
    """With backend "cv2" Paddle casts the transformed sample with ``.astype``: a tensor
    from ToTensor stays a tensor (of the default float dtype)."""
    import fw.vision.transforms as T

    ip, lp, images, _ = write_idx_pair(str(tmp_path), "train", 3)
    img, _ = D.MNIST(ip, lp, backend="cv2", transform=T.ToTensor())[2]
    assert isinstance(img, fw.Tensor) and img.shape == [1, 28, 28]
    np.testing.assert_array_equal(img.numpy(), T.ToTensor()(images[2].astype(np.float32)).numpy())
    img, _ = D.MNIST(ip, lp, backend="pil", transform=T.ToTensor())[2]
    assert isinstance(img, fw.Tensor)
    np.testing.assert_allclose(img.numpy()[0], images[2] / 255.0, rtol=1e-6)


def test_flowers_extraction_race_uses_the_finished_copy(tmp_path, monkeypatch):
    """Two processes extracting at once: the one that loses the final rename uses the
    winner's directory instead of failing."""
    tgz, lab, setid, decoded, _, split = write_flowers(str(tmp_path))
    from fw.vision.datasets import flowers

    real_replace = os.replace

    def winner_first(src, dst):  # another process completes just before this rename
        os.makedirs(dst)
        for name in os.listdir(src):
            shutil.copy(os.path.join(src, name), dst)
        real_replace(src, dst)  # now fails: dst exists and is not empty

    monkeypatch.setattr(flowers.os, "replace", winner_first)
    ds = D.Flowers(tgz, lab, setid, mode="test", backend="cv2")
    np.testing.assert_array_equal(ds[0][0], decoded[split["trnid"].ravel()[0]])
    assert os.listdir(tmp_path / "102flowers") == ["jpg"]  # no leftover temporary
