"""fw.audio.datasets: ESC50 and TESS download a tiny archive in the published layout from a
loopback server (never the network) through fw.utils.download, extract it into the hub
cache, split folds as Paddle does, and return waveforms or features."""

from __future__ import annotations

import hashlib
import zipfile

import numpy as np
import pytest

import fw
from fw.audio import features as A
from fw.audio.datasets import ESC50, TESS
from fw.core.errors import InvalidArgumentError

pytest.importorskip("fw.utils.download")


def _wav_bytes(tmp_path, seed, n=800, sr=8000):
    data = np.random.default_rng(seed).uniform(-0.5, 0.5, size=(1, n)).astype(np.float32)
    path = tmp_path / f"w{seed}.wav"
    fw.audio.save(str(path), fw.to_tensor(data), sr)
    return path.read_bytes(), np.round(data[0] * 32768) / 32768


@pytest.fixture
def served(tmp_path, monkeypatch):
    from fw.hub.testing import serve_directory

    root = tmp_path / "served"
    root.mkdir()
    monkeypatch.setenv("FW_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("FW_HUB_OFFLINE", raising=False)
    with serve_directory(str(root)) as base:
        yield root, base


def _archive(root, base, name, members):
    path = root / name
    with zipfile.ZipFile(path, "w") as z:
        for member, data in members.items():
            z.writestr(member, data)
    return {"url": f"{base}/{name}", "md5": hashlib.md5(path.read_bytes()).hexdigest()}


def test_esc50_folds_waveforms_and_features(served, tmp_path):
    root, base = served
    rows = [("1-1-A-0.wav", 1, 0, "dog"), ("2-1-A-1.wav", 2, 1, "rooster"),
            ("1-2-A-5.wav", 1, 5, "cat"), ("3-1-A-0.wav", 3, 0, "dog")]
    members, waves = {}, {}
    for i, (fname, *_rest) in enumerate(rows):
        members[f"ESC-50-master/audio/{fname}"], waves[fname] = _wav_bytes(tmp_path, i)
    members["ESC-50-master/meta/esc50.csv"] = (
        "filename,fold,target,category,esc10,src_file,take\n"
        + "".join(f"{f},{fold},{t},{c},False,x,A\n" for f, fold, t, c in rows))
    archive = _archive(root, base, "ESC-50-master.zip", members)
    dev = ESC50(mode="dev", split=1, archive=archive)
    assert [r for m, r, _ in base.requests if m == "GET"] == ["/ESC-50-master.zip"]
    assert len(dev) == 2 and dev.labels == [0, 5]
    wav, label = dev[0]
    assert label == 0 and wav.shape == [800] and wav.dtype == fw.float32
    np.testing.assert_allclose(wav.numpy(), waves["1-1-A-0.wav"], atol=1e-7)
    # extracted once: a second data set reads the cache without any request
    train = ESC50(mode="train", split=1, feat_type="mfcc", archive=archive, n_mfcc=8,
                  n_mels=16, n_fft=128)
    assert len([m for m, _, _ in base.requests if m == "GET"]) == 1
    assert train.labels == [1, 0]
    feat, label = train[0]
    want = A.MFCC(sr=8000, n_mfcc=8, n_mels=16, n_fft=128)(
        fw.to_tensor(waves["2-1-A-1.wav"][None].astype(np.float32)))[0]
    assert label == 1 and feat.shape == want.shape
    np.testing.assert_allclose(feat.numpy(), want.numpy(), rtol=1e-5, atol=1e-4)
    spec = ESC50(mode="dev", split=3, feat_type="spectrogram", archive=archive, n_fft=64)
    assert spec[0][0].shape == [33, 800 // 512 + 1]


def test_tess_folds_by_sorted_file_order(served, tmp_path):
    root, base = served
    names = ["OAF_back_angry.wav", "OAF_back_sad.wav", "YAF_dog_ps.wav", "YAF_dog_fear.wav",
             "OAF_cat_happy.wav"]
    members = {f"TESS_Toronto_emotional_speech_set/{n.split('_')[0]}/{n}":
               _wav_bytes(tmp_path, i)[0] for i, n in enumerate(names)}
    archive = _archive(root, base, "TESS.zip", members)
    ordered = sorted(f"TESS_Toronto_emotional_speech_set/{n.split('_')[0]}/{n}"
                     for n in names)
    emotions = [p.rsplit("_", 1)[1][:-4] for p in ordered]
    dev = TESS(mode="dev", n_folds=2, split=2, archive=archive)
    want = [TESS.label_list.index(e) for i, e in enumerate(emotions) if i % 2 == 1]
    assert dev.labels == want and len(dev) == 2
    train = TESS(mode="train", n_folds=2, split=2, archive=archive, feat_type="raw")
    assert train.labels == [TESS.label_list.index(e) for i, e in enumerate(emotions)
                            if i % 2 == 0]
    assert train[0][0].shape == [800]


def test_bad_arguments(served):
    with pytest.raises(InvalidArgumentError, match="ESC50.*'split'.*6"):
        ESC50(split=6)
    with pytest.raises(InvalidArgumentError, match="TESS.*'mode'.*'test'"):
        TESS(mode="test")
    with pytest.raises(InvalidArgumentError, match="TESS.*'split'.*1..2"):
        TESS(n_folds=2, split=3)
    with pytest.raises(InvalidArgumentError, match="'archive' must be a dict"):
        ESC50(archive={"url": "http://127.0.0.1:9/x.zip"})
    assert ESC50.archive["md5"] == "7771e4b9d86d0945acce719c7a59305a"
    assert TESS.archive["md5"] == "1465311b24d1de704c4c63e4ccc470c7"
