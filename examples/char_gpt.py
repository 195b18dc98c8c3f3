"""A small character-level GPT trained on a few short tales, then sampled.

The model is the decoder-only transformer of GPT (Radford et al., 2018), written
with fw.nn: token and position embeddings, N pre-norm blocks of causal
self-attention (fw.nn.functional.scaled_dot_product_attention with
``is_causal=True``) and a GELU MLP, a final layer norm and an output head tied to
the token embedding (``--untied`` gives it its own weight). It is trained with
fw.optimizer.AdamW (cosine-decayed learning rate, global-norm gradient clipping)
on examples/data/tales.txt (three short tales written for this repository and
dedicated to the public domain, about 9 KB), then generates text by temperature
sampling.

The loss starts near ln(vocabulary size) (a uniform guess) and must fall well
below it. Run:

    PYTHONPATH=packages/fw-core/src:packages/fw-autograd/src:packages/fw-nn/src \\
        python examples/char_gpt.py [--quick] [--steps N] [--seed S]
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

import fw
import fw.nn as nn
import fw.nn.functional as F

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tales.txt")


class CharVocab:
    """Characters <-> ids (the sorted set of characters of the text)."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def encode(self, s):
        return np.array([self.index[c] for c in s], dtype=np.int64)

    def decode(self, ids):
        return "".join(self.chars[int(i)] for i in ids)


class CausalSelfAttention(nn.Layer):
    def __init__(self, d_model, n_head, dropout):
        super().__init__()
        if d_model % n_head:
            raise ValueError(f"d_model {d_model} is not a multiple of n_head {n_head}")
        self.n_head = n_head
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = dropout

    def forward(self, x):
        b, t, d = x.shape
        # [B, T, 3, H, D/H]: q, k, v in the [batch, seq, heads, head_dim] layout of Paddle's SDPA
        q, k, v = fw.unbind(self.qkv(x).reshape([b, t, 3, self.n_head, d // self.n_head]), 2)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout, is_causal=True,
                                           training=self.training)
        return self.proj(y.reshape([b, t, d]))


class Block(nn.Layer):
    """Pre-norm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, d_model, n_head, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_head, dropout)
        self.ln2 = nn.LayerNorm(d_model)
        # GPT-2's tanh form of GELU (fw's exact GELU goes through scipy's float32 erf,
        # several times slower than tanh on CPU)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(approximate=True),
                                 nn.Linear(4 * d_model, d_model), nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class CharGPT(nn.Layer):
    """ids ``[B, T]`` (T <= block_size) -> next-character logits ``[B, T, vocab]``."""

    def __init__(self, vocab_size, block_size, n_layer=2, d_model=64, n_head=4,
                 dropout=0.0, tied=True):
        super().__init__()
        self.block_size = block_size
        init = nn.initializer.Normal(0.0, 0.02)
        self.tok = nn.Embedding(vocab_size, d_model, weight_attr=fw.ParamAttr(initializer=init))
        self.pos = nn.Embedding(block_size, d_model, weight_attr=fw.ParamAttr(initializer=init))
        self.blocks = nn.Sequential(*[Block(d_model, n_head, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = None if tied else nn.Linear(d_model, vocab_size, bias_attr=False)

    def forward(self, ids):
        t = ids.shape[1]
        h = self.tok(ids) + self.pos(fw.arange(t, dtype="int64"))
        h = self.ln_f(self.blocks(h))
        if self.head is None:  # tied: the embedding matrix read backwards
            return fw.matmul(h, self.tok.weight, transpose_y=True)
        return self.head(h)


def get_batch(data, block_size, batch_size, rng):
    """Random windows of the text: inputs ``[B, T]`` and targets shifted by one."""
    start = rng.integers(0, len(data) - block_size - 1, batch_size)
    idx = start[:, None] + np.arange(block_size)[None, :]
    return fw.to_tensor(data[idx]), fw.to_tensor(data[idx + 1])


def lm_loss(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits.reshape([-1, logits.shape[-1]]), y.reshape([-1]))


def estimate_loss(model, data, block_size, batch_size, batches, seed):
    """Mean loss over a fixed set of windows (the same ones before and after training)."""
    rng = np.random.default_rng(seed)
    model.eval()
    with fw.no_grad():
        losses = [float(lm_loss(model, *get_batch(data, block_size, batch_size, rng)))
                  for _ in range(batches)]
    model.train()
    return float(np.mean(losses))


def sample(model, vocab, prompt, n_chars, temperature=0.8):
    """Generate `n_chars` characters after `prompt` (draws from fw's generator)."""
    model.eval()
    ids = list(vocab.encode(prompt))
    with fw.no_grad():
        for _ in range(n_chars):
            ctx = fw.to_tensor(np.array([ids[-model.block_size:]], dtype=np.int64))
            logits = model(ctx)[0, -1] / temperature
            ids.append(int(fw.multinomial(F.softmax(logits), 1).item()))
    model.train()
    return vocab.decode(ids)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI-sized run (120 steps of 32 positions)")
    ap.add_argument("--steps", type=int, default=None, help="default 800 (quick: 120)")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--block-size", type=int, default=None,
                    help="context length, default 64 (quick: 32)")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--untied", action="store_true", help="a separate output head")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--sample-chars", type=int, default=200)
    ap.add_argument("--text", default=DATA, help="the training text (UTF-8)")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args(argv)


def main(argv=None):
    """Train, sample; returns the figures (``initial_loss``, ``final_loss``, the
    per-step ``losses``, held-out ``val_loss_before``/``val_loss_after``,
    ``sample``, ``ln_vocab``, ``seconds``)."""
    args = parse_args(argv)
    steps = args.steps if args.steps is not None else (120 if args.quick else 800)
    if args.block_size is None:
        args.block_size = 32 if args.quick else 64
    fw.seed(args.seed)
    rng = np.random.default_rng(args.seed)
    with open(args.text, encoding="utf-8") as f:
        text = f.read()
    vocab = CharVocab(text)
    data = vocab.encode(text)
    split = int(0.9 * len(data))  # the last 10% is held out
    train_data, val_data = data[:split], data[split:]
    model = CharGPT(len(vocab), args.block_size, args.layers, args.d_model, args.heads,
                    args.dropout, tied=not args.untied)
    n_params = sum(int(np.prod(p.shape)) for p in model.parameters())
    print(f"text: {len(text):,} characters, vocabulary {len(vocab)} (ln V = "
          f"{math.log(len(vocab)):.3f}); model: {args.layers} blocks, d={args.d_model}, "
          f"{args.heads} heads, {n_params:,} parameters, "
          f"{'untied' if args.untied else 'tied'} head")

    sched = fw.optimizer.lr.CosineAnnealingDecay(args.lr, T_max=steps, eta_min=args.lr / 10)
    opt = fw.optimizer.AdamW(learning_rate=sched, parameters=model.parameters(),
                             weight_decay=args.weight_decay,
                             grad_clip=nn.ClipGradByGlobalNorm(1.0))
    vb = min(args.block_size, len(val_data) - 2)
    val_before = estimate_loss(model, val_data, vb, args.batch_size, 4, args.seed + 1)
    losses = []
    every = max(steps // 10, 1)
    t0 = time.perf_counter()
    for step in range(1, steps + 1):
        loss = lm_loss(model, *get_batch(train_data, args.block_size, args.batch_size, rng))
        loss.backward()
        opt.step()
        opt.clear_grad()
        sched.step()
        losses.append(float(loss))
        if step == 1 or step % every == 0:
            val = estimate_loss(model, val_data, vb, args.batch_size, 2, args.seed + 1)
            print(f"step {step:5d}  train loss {np.mean(losses[-every:]):.3f}  "
                  f"held-out loss {val:.3f}  lr {opt.get_lr():.2e}")
    seconds = time.perf_counter() - t0
    val_after = estimate_loss(model, val_data, vb, args.batch_size, 4, args.seed + 1)
    tail = max(len(losses) // 10, 1)
    initial, final = float(np.mean(losses[:tail])), float(np.mean(losses[-tail:]))
    print(f"training loss {losses[0]:.3f} at the first step, {initial:.3f} over the first "
          f"{tail} steps, {final:.3f} over the last {tail} ({steps} steps, {seconds:.1f} s, "
          f"{1e3 * seconds / steps:.0f} ms/step); held-out loss {val_before:.3f} -> "
          f"{val_after:.3f}")
    text_out = sample(model, vocab, "The ", args.sample_chars, args.temperature)
    print(f"sample (temperature {args.temperature}):\n{text_out}")
    return {"initial_loss": initial, "final_loss": final, "losses": losses,
            "val_loss_before": val_before, "val_loss_after": val_after,
            "sample": text_out, "ln_vocab": math.log(len(vocab)), "seconds": seconds}


if __name__ == "__main__":
    main()
