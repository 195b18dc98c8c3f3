"""The CoNLL-2005 semantic role labelling test set (Paddle's ``paddle.text.Conll05st``)."""

from __future__ import annotations

import gzip
import io

import numpy as np

from fw.core.errors import InvalidArgumentError
from fw.io import Dataset
from fw.text.datasets._common import fetch, open_tar, read_member

DATA_URL = "http://paddlemodels.bj.bcebos.com/conll05st/conll05st-tests.tar.gz"
DATA_MD5 = "387719152ae52d60422c016e92a742fc"
WORDDICT_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2FwordDict.txt"
WORDDICT_MD5 = "ea7fb7d4c75cc6254716f0177a506baa"
VERBDICT_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2FverbDict.txt"
VERBDICT_MD5 = "0d2977293bbb6cbefab5b0f97db1e77c"
TRGDICT_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2FtargetDict.txt"
TRGDICT_MD5 = "d8c7f03ceb5fc2e5a0fa7503a4353751"
EMB_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2Femb"
EMB_MD5 = "bf436eb0faa1f6f9103017f8be57cdb7"
UNK_IDX = 0

_WORDS = "conll05st-release/test.wsj/words/test.wsj.words.gz"
_PROPS = "conll05st-release/test.wsj/props/test.wsj.props.gz"


def _bio(column, who):
    """One predicate's bracketed argument column (``(A0*``, ``*``, ``*)``, ``(V*)``) as
    B-/I-/O tags."""
    tags, cur, inside = [], "O", False
    for cell in column:
        if cell == "*":
            tags.append("I-" + cur if inside else "O")
        elif cell == "*)":
            tags.append("I-" + cur)
            inside = False
        elif "(" in cell:
            cur = cell[1:cell.find("*")]
            tags.append("B-" + cur)
            inside = ")" not in cell
        else:
            raise InvalidArgumentError(f"{who}: unexpected label {cell!r} in {_PROPS}")
    return tags


class Conll05st(Dataset):
    """One item per (sentence, predicate) of the WSJ test section: word ids, the five
    context words around the predicate (repeated per word), the predicate id, a mark of
    the 5-word window and the B-/I-/O role labels.

    Args:
        data_file (str, optional): ``conll05st-tests.tar.gz`` (gzipped word and props
            columns). Default None (download).
        word_dict_file (str, optional): ``wordDict.txt``, one word per line.
        verb_dict_file (str, optional): ``verbDict.txt``, one verb per line.
        target_dict_file (str, optional): ``targetDict.txt``, the ``B-X``/``I-X``/``O``
            labels (numbered ``B-X``, ``I-X`` per tag in file order, then ``O``; Paddle
            numbers tags in ``set`` order, which changes from run to run).
        emb_file (str, optional): the word embedding file (only its path is returned by
            `get_embedding`).
        download (bool, optional): download the files not given. Default True.

    Returns:
        Dataset: items of 9 int64 arrays (word, ctx_n2, ctx_n1, ctx_0, ctx_p1, ctx_p2,
        predicate, mark, label), each of the sentence's length.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import gzip, io, os, tarfile, tempfile
            >>> d = tempfile.mkdtemp()
            >>> cols = {"words": b"cats\\nsleep\\n\\n", "props": b"-  (A0*)\\nsleep (V*)\\n\\n"}
            >>> with tarfile.open(os.path.join(d, "t.tgz"), "w:gz") as tar:
            ...     for kind, text in cols.items():
            ...         data = gzip.compress(text)
            ...         info = tarfile.TarInfo(f"conll05st-release/test.wsj/{kind}/"
            ...                                f"test.wsj.{kind}.gz")
            ...         info.size = len(data)
            ...         tar.addfile(info, io.BytesIO(data))
            >>> for name, text in [("w", "cats\\nsleep\\n"), ("v", "sleep\\n"),
            ...                    ("t", "B-A0\\nI-A0\\nB-V\\nI-V\\nO\\n"), ("e", "")]:
            ...     with open(os.path.join(d, name), "w") as f:
            ...         _ = f.write(text)
            >>> ds = fw.text.Conll05st(*(os.path.join(d, n) for n in ("t.tgz", "w", "v", "t", "e")))
            >>> ds.labels[0], ds[0][-1].tolist()
            (['B-A0', 'B-V'], [0, 2])
    """

    def __init__(self, data_file: str | None = None, word_dict_file: str | None = None,
                 verb_dict_file: str | None = None, target_dict_file: str | None = None,
                 emb_file: str | None = None, download: bool = True):
        who = "Conll05st"
        self.data_file = fetch(data_file, DATA_URL, DATA_MD5, "conll05st", download, who)
        self.word_dict_file = fetch(word_dict_file, WORDDICT_URL, WORDDICT_MD5, "conll05st",
                                    download, who, "word_dict_file")
        self.verb_dict_file = fetch(verb_dict_file, VERBDICT_URL, VERBDICT_MD5, "conll05st",
                                    download, who, "verb_dict_file")
        self.target_dict_file = fetch(target_dict_file, TRGDICT_URL, TRGDICT_MD5,
                                      "conll05st", download, who, "target_dict_file")
        self.emb_file = fetch(emb_file, EMB_URL, EMB_MD5, "conll05st", download, who,
                              "emb_file")
        self.word_dict = self._load_dict(self.word_dict_file)
        self.predicate_dict = self._load_dict(self.verb_dict_file)
        self.label_dict = self._load_label_dict(self.target_dict_file)
        self._load_anno()

    @staticmethod
    def _load_dict(filename):
        with open(filename) as f:
            return {line.strip(): i for i, line in enumerate(f)}

    @staticmethod
    def _load_label_dict(filename):
        tags = []
        with open(filename) as f:
            for line in f:
                line = line.strip()
                if line.startswith(("B-", "I-")) and line[2:] not in tags:
                    tags.append(line[2:])
        d = {}
        for tag in tags:
            d["B-" + tag] = len(d)
            d["I-" + tag] = len(d)
        d["O"] = len(d)
        return d

    def _load_anno(self):
        who = "Conll05st"
        with open_tar(self.data_file, who) as tar:
            try:
                words = gzip.GzipFile(fileobj=io.BytesIO(read_member(tar, _WORDS, who))).read()
                props = gzip.GzipFile(fileobj=io.BytesIO(read_member(tar, _PROPS, who))).read()
            except (OSError, EOFError) as e:
                raise InvalidArgumentError(f"{who}: {self.data_file}: a member is not valid "
                                           f"gzip: {e}") from None
        self.sentences, self.predicates, self.labels = [], [], []
        sentence, rows = [], []
        for word, prop in zip(words.decode().splitlines(), props.decode().splitlines()):
            cells = prop.split()
            if cells:
                sentence.append(word.strip())
                rows.append(cells)
                continue
            if rows:  # a blank line ends a sentence: column 0 holds the predicates
                columns = list(zip(*rows))
                verbs = [v for v in columns[0] if v != "-"]
                for i, column in enumerate(columns[1:]):
                    self.sentences.append(sentence)
                    self.predicates.append(verbs[i])
                    self.labels.append(_bio(column, who))
            sentence, rows = [], []

    def __getitem__(self, idx):
        sentence, predicate, labels = self.sentences[idx], self.predicates[idx], \
            self.labels[idx]
        n = len(sentence)
        v = labels.index("B-V")
        mark = [0] * n
        ctx = []
        for off, pad in ((-2, "bos"), (-1, "bos"), (0, None), (1, "eos"), (2, "eos")):
            if 0 <= v + off < n:
                mark[v + off] = 1
                ctx.append(sentence[v + off])
            else:
                ctx.append(pad)
        words = [self.word_dict.get(w, UNK_IDX) for w in sentence]
        ctx_ids = [[self.word_dict.get(w, UNK_IDX)] * n for w in ctx]
        return (np.array(words), *(np.array(c) for c in ctx_ids),
                np.array([self.predicate_dict.get(predicate)] * n), np.array(mark),
                np.array([self.label_dict.get(w) for w in labels]))

    def __len__(self):
        return len(self.sentences)

    def get_dict(self):
        """The three dictionaries, each name -> id: words, predicates (verbs) and
        role labels.

        Returns:
            tuple[dict, dict, dict]: (word_dict, predicate_dict, label_dict).

        Examples:
            >>> import fw
            >>> import gzip, io, os, tarfile, tempfile
            >>> d = tempfile.mkdtemp()
            >>> cols = {"words": b"cats\\nsleep\\n\\n", "props": b"-  (A0*)\\nsleep (V*)\\n\\n"}
            >>> with tarfile.open(os.path.join(d, "t.tgz"), "w:gz") as tar:
            ...     for kind, text in cols.items():
            ...         data = gzip.compress(text)
            ...         info = tarfile.TarInfo(f"conll05st-release/test.wsj/{kind}/"
            ...                                f"test.wsj.{kind}.gz")
            ...         info.size = len(data)
            ...         tar.addfile(info, io.BytesIO(data))
            >>> for name, text in [("w", "cats\\nsleep\\n"), ("v", "sleep\\n"),
            ...                    ("t", "B-A0\\nI-A0\\nB-V\\nI-V\\nO\\n"), ("e", "")]:
            ...     with open(os.path.join(d, name), "w") as f:
            ...         _ = f.write(text)
            >>> files = [os.path.join(d, n) for n in ("t.tgz", "w", "v", "t", "e")]
            >>> ds = fw.text.Conll05st(*files)
            >>> words, verbs, labels = ds.get_dict()
            >>> words["sleep"], verbs["sleep"], labels["B-V"]
            (1, 0, 2)
        """
        return self.word_dict, self.predicate_dict, self.label_dict

    def get_embedding(self):
        """The path of the word embedding file (fw does not read it).

        Returns:
            str: the path given as ``emb_file`` (or downloaded).

        Examples:
            >>> import fw
            >>> import gzip, io, os, tarfile, tempfile
            >>> d = tempfile.mkdtemp()
            >>> cols = {"words": b"cats\\nsleep\\n\\n", "props": b"-  (A0*)\\nsleep (V*)\\n\\n"}
            >>> with tarfile.open(os.path.join(d, "t.tgz"), "w:gz") as tar:
            ...     for kind, text in cols.items():
            ...         data = gzip.compress(text)
            ...         info = tarfile.TarInfo(f"conll05st-release/test.wsj/{kind}/"
            ...                                f"test.wsj.{kind}.gz")
            ...         info.size = len(data)
            ...         tar.addfile(info, io.BytesIO(data))
            >>> for name, text in [("w", "cats\\nsleep\\n"), ("v", "sleep\\n"),
            ...                    ("t", "B-A0\\nI-A0\\nB-V\\nI-V\\nO\\n"), ("e", "")]:
            ...     with open(os.path.join(d, name), "w") as f:
            ...         _ = f.write(text)
            >>> files = [os.path.join(d, n) for n in ("t.tgz", "w", "v", "t", "e")]
            >>> ds = fw.text.Conll05st(*files)
            >>> ds.get_embedding() == files[4]
            True
        """
        return self.emb_file
