"""fw.quantization: Paddle 3.x's paddle.quantization (QuantConfig, observers, quanters,
PTQ, QAT). See packages/fw-slim/README.md for the design."""
