"""The Penn Treebank language-model data of Mikolov's simple-examples (Paddle's
``paddle.text.Imikolov``)."""

from __future__ import annotations

import collections

import numpy as np

from fw.core.errors import InvalidArgumentError
from fw.io import Dataset
from fw.text.datasets._common import check_choice, fetch, open_tar, read_member

URL = "https://dataset.bj.bcebos.com/imikolov%2Fsimple-examples.tgz"
MD5 = "30177ea32e27c525793142b6bf2c8e2d"


class Imikolov(Dataset):
    """PTB sentences as word ids: n-grams (``data_type='NGRAM'``) or (source, target)
    sequence pairs shifted by one word (``'SEQ'``). The vocabulary counts the train and
    valid files (each line adds one ``<s>`` and one ``<e>``), keeps words seen more than
    ``min_word_freq`` times by falling count then alphabetically, and ends with
    ``'<unk>'``.

    Args:
        data_file (str, optional): the path of ``simple-examples.tgz`` (members
            ``./simple-examples/data/ptb.{train,valid,test}.txt``); None downloads it.
        data_type (str, optional): 'NGRAM' or 'SEQ'. Default 'NGRAM'.
        window_size (int, optional): the n of the n-grams (required for NGRAM); for SEQ,
            the longest source kept (-1: all). Default -1.
        mode (str, optional): 'train' or 'test'. Default 'train'.
        min_word_freq (int, optional): the minimum count (exclusive). Default 50.
        download (bool, optional): download when ``data_file`` is None. Default True.

    Returns:
        Dataset: NGRAM items are tuples of ``window_size`` int64 scalars' arrays; SEQ
        items ``(src int64[n], trg int64[n])``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import io, os, tarfile, tempfile
            >>> path = os.path.join(tempfile.mkdtemp(), "ptb.tgz")
            >>> with tarfile.open(path, "w:gz") as tar:
            ...     for split in ("train", "valid", "test"):
            ...         text = b"a b a\\n"
            ...         info = tarfile.TarInfo(f"./simple-examples/data/ptb.{split}.txt")
            ...         info.size = len(text)
            ...         tar.addfile(info, io.BytesIO(text))
            >>> ds = fw.text.Imikolov(data_file=path, data_type="SEQ", min_word_freq=0)
            >>> [x.tolist() for x in ds[0]]
            [[2, 0, 3, 0], [0, 3, 0, 1]]
    """

    def __init__(self, data_file: str | None = None, data_type: str = "NGRAM",
                 window_size: int = -1, mode: str = "train", min_word_freq: int = 50,
                 download: bool = True):
        self.data_type = check_choice(data_type, "data_type", ("NGRAM", "SEQ"), "Imikolov",
                                      fold=str.upper)
        self.mode = check_choice(mode, "mode", ("train", "test"), "Imikolov")
        if self.data_type == "NGRAM" and window_size < 1:
            raise InvalidArgumentError(f"Imikolov: data_type='NGRAM' needs window_size >= 1, "
                                       f"got {window_size}")
        self.window_size = window_size
        self.min_word_freq = min_word_freq
        self.data_file = fetch(data_file, URL, MD5, "imikolov", download, "Imikolov")
        with open_tar(self.data_file, "Imikolov") as tar:
            lines = {split: read_member(tar, f"./simple-examples/data/ptb.{split}.txt",
                                        "Imikolov").decode("utf-8").splitlines()
                     for split in ("train", "valid", self.mode)}
        self.word_idx = self._build_word_dict(lines["train"] + lines["valid"])
        self._load(lines[self.mode])

    def _build_word_dict(self, lines):
        freq = collections.Counter()
        for line in lines:
            freq.update(line.split())
            freq["<s>"] += 1
            freq["<e>"] += 1
        freq.pop("<unk>", None)
        kept = sorted(((w, c) for w, c in freq.items() if c > self.min_word_freq),
                      key=lambda x: (-x[1], x[0]))
        word_idx = {w: i for i, (w, _) in enumerate(kept)}
        word_idx["<unk>"] = len(kept)
        return word_idx

    def _load(self, lines):
        unk = self.word_idx["<unk>"]
        self.data = []
        for line in lines:
            if self.data_type == "NGRAM":
                ids = [self.word_idx.get(w, unk) for w in ["<s>", *line.split(), "<e>"]]
                n = self.window_size
                self.data.extend(tuple(ids[i - n:i]) for i in range(n, len(ids) + 1))
            else:
                ids = [self.word_idx.get(w, unk) for w in line.split()]
                src = [self.word_idx.get("<s>", unk), *ids]
                trg = [*ids, self.word_idx.get("<e>", unk)]
                if self.window_size > 0 and len(src) > self.window_size:
                    continue
                self.data.append((src, trg))

    def __getitem__(self, idx):
        return tuple(np.array(d) for d in self.data[idx])

    def __len__(self):
        return len(self.data)
