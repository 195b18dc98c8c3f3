"""fw.vision.datasets downloading through fw.utils.download from a loopback HTTP
server that stands in for Paddle's hosts (FW_HUB_MIRRORS points Paddle's real URLs at
it): md5 verification, corrupted and truncated downloads failing closed, cache reuse
without network, offline misses naming the file to place, cut connections resumed."""

from __future__ import annotations

import hashlib
import os
import pathlib
import shutil
import sys

import numpy as np
import pytest

from fw.vision import datasets as D
from fw.vision.datasets import cifar, flowers, voc2012

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _vision_dataset_files import write_cifar, write_flowers, write_idx_pair, write_voc  # noqa: E402

_download = pytest.importorskip("fw.utils.download")
if not hasattr(_download, "get_path_from_url"):  # pragma: no cover
    pytest.skip("needs fw-hub's downloader (fw.utils.download.get_path_from_url)",
                allow_module_level=True)

from fw.hub.errors import ChecksumError, OfflineError  # noqa: E402


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    """fw.hub's loopback server (127.0.0.1, OS-chosen port, shut down on exit) as the
    mirror of Paddle's two dataset hosts, and a fresh hub cache."""
    from fw.hub.testing import serve_directory

    served = tmp_path / "served"
    served.mkdir()
    monkeypatch.setenv("FW_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("FW_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with serve_directory(str(served)) as base:
        monkeypatch.setenv("FW_HUB_MIRRORS",
                           f"https://dataset.bj.bcebos.com/={base}/ds/,"
                           f"http://paddlemodels.bj.bcebos.com/={base}/pm/")
        yield served, _Log(base), tmp_path / "cache" / "datasets"


class _Log:
    """The served URL and the paths of the GET requests it answered."""

    def __init__(self, base):
        self.base = base

    @property
    def log(self):
        return [path for method, path, _ in self.base.requests if method == "GET"]


def _md5(path):
    p = pathlib.Path(path)
    return hashlib.md5(p.read_bytes()).hexdigest() if p.exists() else None


def _serve_mnist(served, monkeypatch, n=5):
    d = served / "ds" / "mnist"
    d.mkdir(parents=True)
    ip, lp, images, labels = write_idx_pair(str(d), "t10k", n)
    monkeypatch.setattr(D.MNIST, "TEST_IMAGE_MD5", _md5(ip))
    monkeypatch.setattr(D.MNIST, "TEST_LABEL_MD5", _md5(lp))
    return ip, lp, images, labels


def test_mnist_downloads_once_then_works_offline(mirror, monkeypatch):
    served, server, cache = mirror
    _, _, images, labels = _serve_mnist(served, monkeypatch)
    ds = D.MNIST(mode="test", backend="cv2")
    assert sorted(server.log) == ["/ds/mnist/t10k-images-idx3-ubyte.gz",
                                  "/ds/mnist/t10k-labels-idx1-ubyte.gz"]
    assert ds.image_path == str(cache / "mnist" / "t10k-images-idx3-ubyte.gz")
    np.testing.assert_array_equal(ds[4][0], images[4])
    assert ds[4][1].tolist() == [labels[4]]
    # cached: no request, even offline and with the server's files gone
    shutil.rmtree(served / "ds")
    monkeypatch.setenv("FW_HUB_OFFLINE", "1")
    ds2 = D.MNIST(mode="test", backend="cv2")
    assert len(server.log) == 2
    np.testing.assert_array_equal(ds2[0][0], images[0])


def test_md5_mismatch_fails_closed(mirror, monkeypatch):
    served, server, cache = mirror
    _serve_mnist(served, monkeypatch)
    monkeypatch.setattr(D.MNIST, "TEST_IMAGE_MD5", "0" * 32)  # not what the server has
    with pytest.raises(ChecksumError, match="md5"):
        D.MNIST(mode="test")
    assert not (cache / "mnist" / "t10k-images-idx3-ubyte.gz").exists()


def test_truncated_download_fails_closed_and_cache_recovers(mirror, monkeypatch):
    served, server, cache = mirror
    ip, lp, images, _ = _serve_mnist(served, monkeypatch)
    full = pathlib.Path(ip).read_bytes()
    # the server now has a cut-off copy; the md5 is the full one's
    pathlib.Path(ip).write_bytes(full[: len(full) // 2])
    with pytest.raises(ChecksumError):
        D.MNIST(mode="test")
    target = cache / "mnist" / "t10k-images-idx3-ubyte.gz"
    assert not target.exists()
    pathlib.Path(ip).write_bytes(full)
    ds = D.MNIST(mode="test", backend="cv2")
    assert _md5(str(target)) == D.MNIST.TEST_IMAGE_MD5
    np.testing.assert_array_equal(ds[1][0], images[1])


def test_corrupted_cache_file_is_replaced(mirror, monkeypatch):
    served, server, cache = mirror
    _, _, images, _ = _serve_mnist(served, monkeypatch)
    D.MNIST(mode="test")
    target = cache / "mnist" / "t10k-labels-idx1-ubyte.gz"
    target.write_bytes(b"garbage")
    n = len(server.log)
    ds = D.MNIST(mode="test", backend="cv2")  # the md5 check catches it: fetched again
    assert server.log[n:] == ["/ds/mnist/t10k-labels-idx1-ubyte.gz"]
    assert len(ds) == len(images)


def test_offline_miss_names_url_and_path(mirror, monkeypatch):
    monkeypatch.setenv("FW_HUB_OFFLINE", "1")
    with pytest.raises(OfflineError) as info:
        D.FashionMNIST(mode="train")
    msg = str(info.value)
    assert "https://dataset.bj.bcebos.com/fashion_mnist/train-images-idx3-ubyte.gz" in msg
    assert os.path.join("fashion-mnist", "train-images-idx3-ubyte.gz") in msg


def test_cifar100_download(mirror, monkeypatch):
    pytest.importorskip("fw.nn.safe_pickle")
    served, server, _ = mirror
    (served / "ds" / "cifar").mkdir(parents=True)
    path = str(served / "ds" / "cifar" / "cifar-100-python.tar.gz")
    written = write_cifar(path, hundred=True)
    monkeypatch.setattr(cifar.Cifar100, "MD5", _md5(path))
    ds = D.Cifar100(mode="test", backend="cv2")
    assert server.log == ["/ds/cifar/cifar-100-python.tar.gz"]
    images, labels = written["test"]
    np.testing.assert_array_equal(np.stack([ds[i][0] for i in range(len(ds))]), images)
    assert [int(ds[i][1]) for i in range(len(ds))] == labels.tolist()


def test_flowers_download(mirror, monkeypatch):
    served, server, _ = mirror
    d = served / "pm" / "flowers"
    d.mkdir(parents=True)
    tgz, lab, setid, decoded, labels, split = write_flowers(str(d))
    monkeypatch.setattr(flowers, "DATA_MD5", _md5(tgz))
    monkeypatch.setattr(flowers, "LABEL_MD5", _md5(lab))
    monkeypatch.setattr(flowers, "SETID_MD5", _md5(setid))
    ds = D.Flowers(mode="valid", backend="cv2")
    assert sorted(server.log) == ["/pm/flowers/102flowers.tgz", "/pm/flowers/imagelabels.mat",
                                  "/pm/flowers/setid.mat"]
    np.testing.assert_array_equal(ds[0][0], decoded[2])
    assert ds[0][1].tolist() == [labels[1]]


def test_voc2012_download(mirror, monkeypatch):
    served, server, _ = mirror
    (served / "ds" / "voc").mkdir(parents=True)
    path = str(served / "ds" / "voc" / "VOCtrainval_11-May-2012.tar")
    ids, lists, samples = write_voc(path)
    monkeypatch.setattr(voc2012, "VOC_MD5", _md5(path))
    ds = D.VOC2012(mode="valid", backend="cv2")
    assert server.log == ["/ds/voc/VOCtrainval_11-May-2012.tar"]
    np.testing.assert_array_equal(ds[0][1], samples[lists["val"][0]][1])


def test_cut_connection_resumes_and_server_errors_fail_closed(mirror, monkeypatch):
    served, server, cache = mirror
    _, _, images, _ = _serve_mnist(served, monkeypatch, n=40)
    server.base.cut_after = 5000  # the first body stops after 5000 bytes, once
    ds = D.MNIST(mode="test", backend="cv2")
    assert any(r[2] for r in server.base.requests), "the cut download resumed with Range"
    np.testing.assert_array_equal(ds[39][0], images[39])
    server.base.fail_status = 503
    with pytest.raises(OSError):
        D.FashionMNIST(mode="train")
    folder = cache / "fashion-mnist"
    assert not folder.exists() or not [p for p in folder.iterdir() if p.suffix == ".gz"]
