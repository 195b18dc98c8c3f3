"""Tiny files in the formats of Paddle's text data sets, written deterministically; the
tests parse them with fw and tools/gen_text_dataset_fixtures.py records what real
Paddle 3.3 makes of the very same files (tests/fixtures/text_datasets_paddle.json)."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile

import numpy as np


def _tar(path, files: dict, mode="w:gz"):
    with tarfile.open(path, mode) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def write_uci(root):
    rng = np.random.default_rng(7)
    data = rng.uniform(0, 100, size=(12, 14)).round(3)
    path = os.path.join(root, "housing.data")
    with open(path, "w") as f:
        for row in data:
            f.write(" ".join(f"{v:.3f}" for v in row) + "\n")
    return path


_IMDB = {
    "aclImdb/train/pos/0_9.txt": b"A great, great movie! I loved it.",
    "aclImdb/train/pos/1_8.txt": b"Great acting; loved the music.\n",
    "aclImdb/train/neg/2_1.txt": b"A dull movie. I hated it... dull dull",
    "aclImdb/test/pos/3_10.txt": b"Loved it: great great fun",
    "aclImdb/test/neg/4_2.txt": b"Dull, and the acting? Terrible.",
    "aclImdb/README": b"not a review",
}


def write_imdb(root):
    return _tar(os.path.join(root, "aclImdb_v1.tar.gz"), _IMDB)


def write_imikolov(root):
    text = {
        "train": b" the cat sat on the mat \n the dog sat \n a cat ran on the road \n",
        "valid": b" the cat ran \n",
        "test": b" the dog ran on a mat \n the bird sat \n",
    }
    return _tar(os.path.join(root, "simple-examples.tgz"),
                {f"./simple-examples/data/ptb.{k}.txt": v for k, v in text.items()})


def write_movielens(root):
    path = os.path.join(root, "ml-1m.zip")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("ml-1m/movies.dat", "1::Toy Story (1995)::Animation|Comedy\n"
                   "2::Jumanji (1995)::Adventure\n3::Heat (1995)::Action|Crime\n")
        z.writestr("ml-1m/users.dat", "1::F::1::10::48067\n2::M::56::16::70072\n"
                   "3::M::25::15::55117\n")
        z.writestr("ml-1m/ratings.dat", "".join(
            f"{1 + i % 3}::{1 + (i * 7) % 3}::{1 + i % 5}::97830{i:04d}\n" for i in range(40)))
    return path


def write_wmt14(root):
    files = {
        "wmt14/src.dict": b"<s>\n<e>\n<unk>\nthe\ncat\ndog\n",
        "wmt14/trg.dict": b"<s>\n<e>\n<unk>\nle\nchat\nchien\n",
        "wmt14/train/train": b"the cat\tle chat\nthe dog runs\tle chien court\nbad line\n",
        "wmt14/test/test": b"the bird\tle oiseau\n",
        "wmt14/gen/gen": b"cat\tchat\n",
    }
    return _tar(os.path.join(root, "wmt14.tgz"), files)


def write_wmt16(root):
    files = {
        "wmt16/train": b"a cat sits\teine katze sitzt\na dog sits\tein hund sitzt\n"
                       b"a cat\teine katze\n",
        "wmt16/test": b"a bird sits\tein vogel sitzt\n",
        "wmt16/val": b"the cat\tdie katze\n",
    }
    return _tar(os.path.join(root, "wmt16.tar.gz"), files)


def write_conll05(root):
    """The test archive (gzipped word and props columns) and the three dictionaries."""
    import gzip

    words = b"The\ncat\nsat\non\nthe\nmat\n\nDogs\nbark\n\n"
    # the second sentence has one predicate: its props rows have two columns
    props = (b"-    (A0*    \n-    *)      \nsit  (V*)    \n-    (AM-LOC*  \n"
             b"-    *       \n-    *)      \n\n-  (A0*)\nbark  (V*)\n\n")
    data = _tar(os.path.join(root, "conll05st-tests.tar.gz"), {
        "conll05st-release/test.wsj/words/test.wsj.words.gz": gzip.compress(words, mtime=0),
        "conll05st-release/test.wsj/props/test.wsj.props.gz": gzip.compress(props, mtime=0),
    })
    paths = [data]
    for name, lines in (("wordDict.txt", ["<unk>", "the", "cat", "sat", "on", "mat", "bark"]),
                        ("verbDict.txt", ["bark", "sit"]),
                        ("targetDict.txt", ["B-A0", "I-A0", "B-V", "I-V", "B-AM-LOC",
                                            "I-AM-LOC", "O"])):
        p = os.path.join(root, name)
        with open(p, "w") as f:
            f.write("\n".join(lines) + "\n")
        paths.append(p)
    emb = os.path.join(root, "emb")
    with open(emb, "wb") as f:
        f.write(b"\0" * 16)
    return (*paths, emb)
