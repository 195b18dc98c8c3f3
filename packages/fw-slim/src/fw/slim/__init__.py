"""fw.slim: pruning, distillation, sensitivity analysis and the quantization report.
See packages/fw-slim/README.md for the design."""
