"""The IMDB movie review sentiment data set (Paddle's ``paddle.text.Imdb``)."""

from __future__ import annotations

import collections
import re
import string

import numpy as np

from fw.io import Dataset
from fw.text.datasets._common import check_choice, fetch, open_tar

URL = "https://dataset.bj.bcebos.com/imdb%2FaclImdb_v1.tar.gz"
MD5 = "7c2ac02c03563afcf9b574c7e56c153a"

_DROP = string.punctuation.encode("latin-1")


class Imdb(Dataset):
    """Reviews as word ids with a label (0 positive, 1 negative, as Paddle). The
    vocabulary is every word of the train and test reviews seen more than ``cutoff``
    times, by falling frequency then alphabetically, plus ``'<unk>'`` last. Words are
    lower-cased with ASCII punctuation removed.

    Args:
        data_file (str, optional): the path of ``aclImdb_v1.tar.gz`` (members
            ``aclImdb/{train,test}/{pos,neg}/*.txt``); None downloads it. Default None.
        mode (str, optional): 'train' or 'test'. Default 'train'.
        cutoff (int, optional): the minimum count (exclusive) of a vocabulary word.
            Default 150.
        download (bool, optional): download when ``data_file`` is None. Default True.

    Returns:
        Dataset: items ``(word ids int64[n], label int64[1])``; ``word_idx`` maps words
        (``str``; Paddle's keys are ``bytes``) to ids.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import io, os, tarfile, tempfile
            >>> path = os.path.join(tempfile.mkdtemp(), "imdb.tar.gz")
            >>> with tarfile.open(path, "w:gz") as tar:
            ...     for name, text in [("train/pos/0.txt", b"good good film"),
            ...                        ("train/neg/1.txt", b"bad film!")]:
            ...         info = tarfile.TarInfo("aclImdb/" + name)
            ...         info.size = len(text)
            ...         tar.addfile(info, io.BytesIO(text))
            >>> ds = fw.text.Imdb(data_file=path, cutoff=0)
            >>> ds.word_idx
            {'film': 0, 'good': 1, 'bad': 2, '<unk>': 3}
            >>> [(d.tolist(), l.tolist()) for d, l in ds]
            [([1, 1, 0], [0]), ([2, 0], [1])]
    """

    def __init__(self, data_file: str | None = None, mode: str = "train", cutoff: int = 150,
                 download: bool = True):
        self.mode = check_choice(mode, "mode", ("train", "test"), "Imdb")
        self.data_file = fetch(data_file, URL, MD5, "imdb", download, "Imdb")
        docs = self._read_all()
        self.word_idx = self._build_word_dict(docs, cutoff)
        unk = self.word_idx["<unk>"]
        self.docs, self.labels = [], []
        for label, polarity in ((0, "pos"), (1, "neg")):
            for split, pol, words in docs:
                if split == self.mode and pol == polarity:
                    self.docs.append([self.word_idx.get(w, unk) for w in words])
                    self.labels.append(label)

    def _read_all(self):
        """(split, polarity, words) of every review, in archive order."""
        pattern = re.compile(r"aclImdb/(train|test)/(pos|neg)/.*\.txt$")
        out = []
        with open_tar(self.data_file, "Imdb") as tar:
            for member in tar:
                m = pattern.match(member.name)
                if m and member.isfile():
                    text = tar.extractfile(member).read().rstrip(b"\n\r")
                    words = text.translate(None, _DROP).lower().split()
                    out.append((m.group(1), m.group(2),
                                [w.decode("utf-8", "replace") for w in words]))
        return out

    @staticmethod
    def _build_word_dict(docs, cutoff):
        freq = collections.Counter(w for _, _, words in docs for w in words)
        kept = sorted(((w, c) for w, c in freq.items() if c > cutoff),
                      key=lambda x: (-x[1], x[0]))
        word_idx = {w: i for i, (w, _) in enumerate(kept)}
        word_idx["<unk>"] = len(kept)
        return word_idx

    def __getitem__(self, idx):
        return np.array(self.docs[idx]), np.array([self.labels[idx]])

    def __len__(self):
        return len(self.docs)
