"""``fw.compat.nn``: PyTorch-style ``nn`` spellings."""

from fw.compat.nn import functional  # noqa: F401
