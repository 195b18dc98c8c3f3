"""fw.text data sets parse tiny files in Paddle's formats (tests/_text_dataset_files.py)
exactly as real Paddle 3.3 does (fixtures/text_datasets_paddle.json, from
tools/gen_text_dataset_fixtures.py), check hand-computed values, fail clearly on bad
input, and download through fw.utils.download from a loopback mirror of Paddle's hosts
(never the network)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import fw
from fw.core.errors import InvalidArgumentError
from fw.text import WMT14, WMT16, Conll05st, Imdb, Imikolov, Movielens, UCIHousing
from fw.text.datasets import uci_housing

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _text_dataset_files as W  # noqa: E402

FIX = json.loads((Path(__file__).parent / "fixtures" / "text_datasets_paddle.json").read_text())


def items(ds):
    return [[x.tolist() for x in ds[i]] for i in range(len(ds))]


@pytest.mark.parametrize("mode", ["train", "test"])
def test_uci_housing_matches_paddle_and_numpy(tmp_path, mode):
    path = W.write_uci(str(tmp_path))
    ds = UCIHousing(data_file=path, mode=mode)
    x, y = ds[0]
    assert x.shape == (13,) and y.shape == (1,) and x.dtype == np.float32
    np.testing.assert_allclose([a + b for a, b in items(ds)],
                               [a + b for a, b in FIX[f"uci_{mode}"]], rtol=1e-6)
    raw = np.loadtxt(path)
    norm = (raw - raw.mean(0)) / (raw.max(0) - raw.min(0))
    rows = raw[:9] if mode == "train" else raw[9:]
    assert len(ds) == len(rows)
    np.testing.assert_allclose(x, (norm[:9] if mode == "train" else norm[9:])[0, :13],
                               rtol=1e-5)
    np.testing.assert_allclose(y, rows[0, 13:], rtol=1e-6)


@pytest.mark.parametrize("mode", ["train", "test"])
def test_imdb_matches_paddle(tmp_path, mode):
    ds = Imdb(data_file=W.write_imdb(str(tmp_path)), mode=mode, cutoff=1)
    assert items(ds) == FIX[f"imdb_{mode}"]
    assert ds.word_idx == FIX["imdb_word_idx"]
    doc, label = ds[0]
    assert doc.dtype == np.int64 and label.shape == (1,)


@pytest.mark.parametrize("mode", ["train", "test"])
def test_imikolov_matches_paddle(tmp_path, mode):
    path = W.write_imikolov(str(tmp_path))
    ngram = Imikolov(data_file=path, window_size=3, mode=mode, min_word_freq=0)
    assert items(ngram) == FIX[f"imikolov_ngram3_{mode}"]
    seq = Imikolov(data_file=path, data_type="seq", window_size=5, mode=mode, min_word_freq=1)
    assert items(seq) == FIX[f"imikolov_seq_{mode}"]
    # 'the' is the most frequent word of train + valid (6 times)
    assert ngram.word_idx["the"] == 0 and ngram.word_idx["<unk>"] == len(ngram.word_idx) - 1


@pytest.mark.parametrize("mode", ["train", "test"])
def test_movielens_split_and_features_match_paddle(tmp_path, mode):
    ds = Movielens(data_file=W.write_movielens(str(tmp_path)), mode=mode, test_ratio=0.3,
                   rand_seed=3)
    got, want = items(ds), FIX[f"movielens_{mode}"]
    assert len(got) == len(want) > 0
    for g, w in zip(got, want):
        # ids, gender, age bucket, job, movie id and rating are Paddle's; category and
        # title ids number sets in sorted order where Paddle's order varies per run
        assert g[:5] + g[7:] == w[:5] + w[7:]
        assert (len(g[5]), len(g[6])) == (len(w[5]), len(w[6]))
    assert ds.categories_dict == {"Action": 0, "Adventure": 1, "Animation": 2, "Comedy": 3,
                                  "Crime": 4}


@pytest.mark.parametrize("mode", ["train", "test", "gen"])
def test_wmt14_matches_paddle(tmp_path, mode):
    ds = WMT14(data_file=W.write_wmt14(str(tmp_path)), mode=mode, dict_size=5)
    assert items(ds) == FIX[f"wmt14_{mode}"]
    src, trg = ds.get_dict()
    assert src == {"<s>": 0, "<e>": 1, "<unk>": 2, "the": 3, "cat": 4}
    assert ds.get_dict(reverse=True)[1][4] == "chat"


def test_wmt16_matches_paddle_and_builds_both_dictionaries(tmp_path):
    path = W.write_wmt16(str(tmp_path))
    ds = WMT16(data_file=path, mode="test", lang="en", src_dict_size=6, trg_dict_size=6)
    assert ds.src_dict == FIX["wmt16_src_dict_en"]
    assert [it[0] for it in items(ds)] == [it[0] for it in FIX["wmt16_test_en"]]
    # the target dictionary comes from the German column (Paddle 3.3 reuses the English one)
    # (ties in count keep first-seen order)
    assert ds.get_dict("de") == {"<s>": 0, "<e>": 1, "<unk>": 2, "eine": 3, "katze": 4,
                                 "sitzt": 5}
    src, trg, trg_next = ds[0]  # "ein vogel sitzt"
    assert trg.tolist() == [0, 2, 2, 5] and trg_next.tolist() == [2, 2, 5, 1]
    de = WMT16(data_file=path, mode="val", lang="de", src_dict_size=4, trg_dict_size=4)
    assert de.get_dict("de") == {"<s>": 0, "<e>": 1, "<unk>": 2, "eine": 3}
    assert de.get_dict("en") == {"<s>": 0, "<e>": 1, "<unk>": 2, "a": 3}
    assert [x.tolist() for x in de[0]] == [[0, 2, 2, 1], [0, 2, 2], [2, 2, 1]]


def test_conll05_matches_paddle(tmp_path):
    files = W.write_conll05(str(tmp_path))
    ds = Conll05st(*files)
    assert len(ds) == len(FIX["conll05"]) == 2
    assert ds.predicates == FIX["conll05_predicates"]
    assert ds.labels == FIX["conll05_labels"]
    got = items(ds)
    for g, w, labels in zip(got, FIX["conll05"], FIX["conll05_labels"]):
        assert g[:8] == w[:8]  # words, the context window, predicate and mark
        # label ids number tags in file order (Paddle: set order); same tags either way
        inv = {v: k for k, v in ds.label_dict.items()}
        assert [inv[i] for i in g[8]] == labels
    assert ds.label_dict == {"B-A0": 0, "I-A0": 1, "B-V": 2, "I-V": 3, "B-AM-LOC": 4,
                             "I-AM-LOC": 5, "O": 6}
    assert ds.get_embedding() == files[-1] and ds.get_dict()[1] == {"bark": 0, "sit": 1}


def test_bad_arguments_and_files_fail_clearly(tmp_path):
    with pytest.raises(InvalidArgumentError, match="UCIHousing.*'mode'.*'valid'"):
        UCIHousing(data_file=W.write_uci(str(tmp_path)), mode="valid")
    with pytest.raises(FileNotFoundError, match="Imdb.*'data_file'.*nope.tgz"):
        Imdb(data_file=str(tmp_path / "nope.tgz"))
    with pytest.raises(InvalidArgumentError, match="download=False"):
        WMT14(download=False)
    bad = tmp_path / "bad.tgz"
    bad.write_bytes(b"\x1f\x8b not really gzip")
    with pytest.raises(InvalidArgumentError, match="Imikolov.*not a readable tar"):
        Imikolov(data_file=str(bad), window_size=2)
    with pytest.raises(InvalidArgumentError, match="NGRAM.*window_size"):
        Imikolov(data_file=W.write_imikolov(str(tmp_path)))
    with pytest.raises(InvalidArgumentError, match="WMT16.*'src_dict_size'"):
        WMT16(data_file=W.write_wmt16(str(tmp_path)))
    with pytest.raises(InvalidArgumentError, match="Movielens.*not a zip"):
        Movielens(data_file=str(bad))
    text = tmp_path / "housing.data"
    text.write_text("1 2 3\n")
    with pytest.raises(InvalidArgumentError, match="3 numbers, not a multiple of 14"):
        UCIHousing(data_file=str(text))


def test_paddle_urls_and_md5s():
    from fw.text.datasets import conll05, imdb, imikolov, movielens, wmt14, wmt16

    assert (uci_housing.URL, uci_housing.MD5) == (
        "http://paddlemodels.bj.bcebos.com/uci_housing/housing.data",
        "d4accdce7a25600298819f8e28e8d593")
    assert imdb.MD5 == "7c2ac02c03563afcf9b574c7e56c153a"
    assert imikolov.MD5 == "30177ea32e27c525793142b6bf2c8e2d"
    assert movielens.MD5 == "c4d9eecfca2ab87c1945afe126590906"
    assert wmt14.MD5_TRAIN == "0791583d57d5beb693b9414c5b36798c"
    assert wmt16.DATA_MD5 == "0c38be43600334966403524a40dcd81e"
    assert conll05.DATA_MD5 == "387719152ae52d60422c016e92a742fc"
    assert conll05.EMB_MD5 == "bf436eb0faa1f6f9103017f8be57cdb7"


def test_download_through_loopback_mirror(tmp_path, monkeypatch):
    pytest.importorskip("fw.utils.download")
    from fw.hub.testing import serve_directory

    served = tmp_path / "served" / "uci_housing"
    served.mkdir(parents=True)
    path = W.write_uci(str(served))
    monkeypatch.setattr(uci_housing, "MD5", hashlib.md5(Path(path).read_bytes()).hexdigest())
    monkeypatch.setenv("FW_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("FW_HUB_OFFLINE", raising=False)
    with serve_directory(str(tmp_path / "served")) as base:
        monkeypatch.setenv("FW_HUB_MIRRORS", f"http://paddlemodels.bj.bcebos.com/={base}/")
        ds = UCIHousing(mode="test")
        assert [r for m, r, _ in base.requests if m == "GET"] == ["/uci_housing/housing.data"]
    cached = tmp_path / "cache" / "datasets" / "uci_housing" / "housing.data"
    assert ds.data_file == str(cached) and cached.read_bytes() == Path(path).read_bytes()
    np.testing.assert_allclose(ds[0][1], UCIHousing(data_file=path, mode="test")[0][1])
    # a checksum mismatch fails closed
    monkeypatch.setattr(uci_housing, "MD5", "0" * 32)
    cached.unlink()
    from fw.hub.errors import ChecksumError

    with serve_directory(str(tmp_path / "served")) as base:
        monkeypatch.setenv("FW_HUB_MIRRORS", f"http://paddlemodels.bj.bcebos.com/={base}/")
        with pytest.raises(ChecksumError):
            UCIHousing(mode="test")
    assert fw.text.UCIHousing is UCIHousing
