"""fw.hub: list/help/load over sources, an offline-first safe cache, weight converters and
text encoders. See packages/fw-hub/README.md for the design."""

__all__: list[str] = []
