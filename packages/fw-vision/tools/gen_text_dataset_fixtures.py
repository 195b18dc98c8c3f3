"""Record what real Paddle 3.3's paddle.text data sets make of the tiny files of
tests/_text_dataset_files.py, into tests/fixtures/text_datasets_paddle.json (run once with
Paddle installed; CI only reads the JSON):

    /path/to/paddle-venv/bin/python packages/fw-vision/tools/gen_text_dataset_fixtures.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "text_datasets_paddle.json")


def items(ds):
    return [[x.tolist() for x in ds[i]] for i in range(len(ds))]


def main():
    tmp = tempfile.mkdtemp()
    os.environ["HOME"] = tmp  # WMT16 writes its dictionaries under ~/.cache/paddle
    os.makedirs(os.path.join(tmp, ".cache", "paddle", "dataset", "wmt16"))
    import _text_dataset_files as W
    import paddle

    T = paddle.text
    out = {}
    uci = W.write_uci(tmp)
    for mode in ("train", "test"):
        out[f"uci_{mode}"] = items(T.UCIHousing(data_file=uci, mode=mode))
    imdb = W.write_imdb(tmp)
    for mode in ("train", "test"):
        ds = T.Imdb(data_file=imdb, mode=mode, cutoff=1)
        out[f"imdb_{mode}"] = items(ds)
    out["imdb_word_idx"] = {(k.decode() if isinstance(k, bytes) else k): v
                            for k, v in ds.word_idx.items()}
    ptb = W.write_imikolov(tmp)
    for mode in ("train", "test"):
        out[f"imikolov_ngram3_{mode}"] = items(T.Imikolov(data_file=ptb, window_size=3,
                                                          mode=mode, min_word_freq=0))
        out[f"imikolov_seq_{mode}"] = items(T.Imikolov(data_file=ptb, data_type="SEQ",
                                                       window_size=5, mode=mode,
                                                       min_word_freq=1))
    ml = W.write_movielens(tmp)
    for mode in ("train", "test"):
        out[f"movielens_{mode}"] = items(T.Movielens(data_file=ml, mode=mode, test_ratio=0.3,
                                                     rand_seed=3))
    w14 = W.write_wmt14(tmp)
    for mode in ("train", "test", "gen"):
        out[f"wmt14_{mode}"] = items(T.WMT14(data_file=w14, mode=mode, dict_size=5))
    w16 = W.write_wmt16(tmp)
    # lang='en' only: Paddle builds every dictionary from the source column and caches
    # it by language and size, so its 'de' results depend on what ran before
    ds = T.WMT16(data_file=w16, mode="test", lang="en", src_dict_size=6, trg_dict_size=6)
    out["wmt16_test_en"] = items(ds)
    out["wmt16_src_dict_en"] = ds.src_dict
    ds = T.Conll05st(*W.write_conll05(tmp))
    out["conll05"] = items(ds)
    out["conll05_labels"] = [list(lbl) for lbl in ds.labels]
    out["conll05_predicates"] = list(ds.predicates)
    with open(OUT, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    print(f"wrote {len(out)} entries to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
