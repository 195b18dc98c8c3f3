"""Mutation testing of fw's core (``hatch run mutate``; docs/mutation.md).

A mutant is one small, realistic bug planted in a copy of the tree (a flipped
operator, an off-by-one number, a negated condition, ...); the tests that execute
the mutated line run against it, and a mutant they do not catch *survives*: a
blind spot of the tests. Modules:

- `areas`: which source files each scoped area holds;
- `mutants`: the operators (cosmic-ray's) and the list of mutants of a file;
- `scratch`: the scratch copy of the tree the mutants are planted in;
- `covmap`: which tests execute which source line (coverage.py, built once);
- `runner`: one mutant -> killed / survived / timeout;
- `equivalent`, `known`: the committed lists ci/mutation/equivalent.toml and
  ci/mutation/known/*.toml;
- `report`: results JSON and the markdown report docs/mutation.md.
"""
