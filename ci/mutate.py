"""Mutation testing of fw's core: ``hatch run mutate`` (docs: ci/mutation/README.md).

    hatch run mutate --area nn [--sample 60] [--seed 1]   # one scoped area
    hatch run mutate --all --sample 60                     # every area
    hatch run mutate packages/fw-nn/src/fw/nn/clip.py      # given files
    hatch run mutate --area nn --survivors                 # rerun the last run's survivors
    hatch run mutate --known                               # the known-bug catalogue
    hatch run mutate --list --area jit                     # count mutants, run nothing
    hatch run mutate --report                              # regenerate docs/mutation.md

Mutants are planted in a scratch copy of the tree, never in the working tree.
Results go to .mutation/results/<area>.json (ignored by git); the exit status is 1
when a --known entry survives or is malformed, else 0 (survivors of a sampled run
are findings, not failures).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mutation import engine, known, report  # noqa: E402
from mutation.areas import AREAS, ROOT  # noqa: E402


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hatch run mutate", description=__doc__.split("\n")[0])
    p.add_argument("paths", nargs="*", help="source files to mutate (repository-relative)")
    p.add_argument("--area", action="append", choices=sorted(AREAS), default=[],
                   help="a scoped area (repeatable)")
    p.add_argument("--all", action="store_true", help="every area")
    p.add_argument("--sample", type=int, help="run N mutants drawn uniformly (per area)")
    p.add_argument("--seed", type=int, default=1, help="seed of --sample (default 1)")
    p.add_argument("--jobs", "-j", type=int, default=1,
                   help="mutants run at once, one scratch copy each (default 1)")
    p.add_argument("--survivors", action="store_true",
                   help="rerun only the survivors of the area's last results and update them")
    p.add_argument("--known", action="store_true", help="check ci/mutation/known/*.toml")
    p.add_argument("--known-file", action="append", default=[], type=Path,
                   help="check only these catalogue files (with --known)")
    p.add_argument("--list", action="store_true", help="print the mutant counts; run nothing")
    p.add_argument("--report", action="store_true",
                   help="regenerate docs/mutation.md from .mutation/results/")
    p.add_argument("--record-before", action="store_true",
                   help="store the current results' scores as the report's 'before' column")
    p.add_argument("--rebuild-map", action="store_true", help="rebuild the coverage maps")
    p.add_argument("--label", help="results file name (default: the area, or 'paths')")
    return p


def _run_known(files: list[Path]) -> int:
    try:
        entries = known.load(files or None)
    except ValueError as e:
        print(f"mutate --known: {e}", file=sys.stderr)
        return 1
    if not entries:
        print("mutate --known: the catalogue is empty", file=sys.stderr)
        return 1
    print(f"mutate --known: {len(entries)} entries")
    outcomes = known.check(entries)
    print(known.table(outcomes))
    bad = [o for o in outcomes if o.status != "killed"]
    print(f"mutate --known: {len(outcomes) - len(bad)} of {len(outcomes)} known bugs caught")
    return 1 if bad else 0


def _rerun_survivors(label: str, args) -> None:
    out = engine.RESULTS / f"{args.label or label}.json"
    if not out.exists():
        raise SystemExit(f"mutate --survivors: no results for {label} ({out.relative_to(ROOT)})")
    doc = engine.load_results(out)
    again = engine.survivors_of(doc)
    before = sum(r["status"] in engine.SURVIVED for r in doc["results"])
    print(f"mutate: {label}: rerunning {len(again)} of the {before} survivors of the run at "
          f"{doc.get('commit')} ({before - len(again)} no longer exist in the sources)",
          flush=True)
    fresh = engine.run([m for _, m in again], jobs=args.jobs, rebuild_maps=args.rebuild_map,
                       log=lambda s: print(s, flush=True))
    for (i, _), rec in zip(again, fresh):
        doc["results"][i] = rec
    doc["summary"] = engine.score(doc["results"])
    doc.setdefault("reruns", []).append({"commit": engine.commit_of(), "at": engine.now(),
                                         "survivors": len(again)})
    out.write_text(json.dumps(doc, indent=1))
    _print_summary(label, doc["results"], out)


def _print_summary(label: str, results: list[dict], out: Path) -> None:
    s = engine.score(results)
    killed = s["killed"] + s["timeout"]
    print(f"\nmutate: {label}: score {s['score']}% = {killed} killed "
          f"({s['timeout']} by timeout) of {killed + s['survived'] + s['uncovered']}"
          f"; {s['survived']} survived, {s['uncovered']} uncovered, {s['equivalent']} equivalent,"
          f" {s['error']} errors; mean {s['mean_seconds']} s per mutant run")
    for r in results:
        if r["status"] in engine.SURVIVED or r["status"] == "error":
            print(f"\n{r['status'].upper()} {r['file']}:{r['line']} {r['operator']} "
                  f"({r['tests']} tests by {r['how'] or '-'})")
            print(f"  file = \"{r['file']}\"\n  scope = \"{r.get('scope', '')}\"\n"
                  f"  old = '''{r['old']}'''\n"
                  f"  operator = \"{r['operator']}\"\n  new = '''{r['new']}'''")
            print("  " + r["diff"].rstrip().replace("\n", "\n  "))
    print(f"\nmutate: results in {out.relative_to(ROOT)}")


def _run_set(label: str, files: list[str], args, area: str | None) -> None:
    if args.survivors:
        _rerun_survivors(label, args)
        return
    mutants = engine.all_mutants(files)
    chosen = engine.sample(mutants, args.sample, args.seed)
    print(f"mutate: {label}: {len(files)} files, {len(mutants)} mutants"
          + (f", running {len(chosen)} of {len(mutants)} (seed {args.seed})"
             if len(chosen) < len(mutants) else ""), flush=True)
    if args.list:
        return
    start = time.monotonic()
    out = engine.RESULTS / f"{args.label or label}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"label": args.label or label, "area": area, "files": files, "total": len(mutants),
            "sampled": len(chosen), "seed": args.seed if len(chosen) < len(mutants) else None,
            "commit": engine.commit_of(), "started": engine.now()}
    results: list[dict] = []

    def save(rec=None):  # after every mutant: an interrupted run keeps what it measured
        if rec is not None:
            results.append(rec)
        doc = {**meta, "seconds": round(time.monotonic() - start, 1),
               "complete": len(results) == len(chosen), "summary": engine.score(results),
               "results": results}
        out.write_text(json.dumps(doc, indent=1))

    engine.run(chosen, jobs=args.jobs, rebuild_maps=args.rebuild_map,
               log=lambda s: print(s, flush=True), on_result=save)
    save()
    _print_summary(label, results, out)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.known:
        return _run_known(args.known_file)
    if args.report or args.record_before:
        if args.record_before:
            report.record_before()
        report.write()
        print(f"mutate: wrote {report.DOC.relative_to(ROOT)}")
        return 0
    areas = sorted(AREAS) if args.all else args.area
    if not areas and not args.paths:
        _parser().error("give --area AREA, --all, PATH..., --known or --report")
    for area in areas:
        _run_set(area, engine.area_files(area), args, area)
    if args.paths:
        files = []
        for p in args.paths:
            path = (Path.cwd() / p).resolve()
            if not path.is_file() or path.suffix != ".py":
                _parser().error(f"{p}: not a Python file")
            files.append(path.relative_to(ROOT).as_posix())
        _run_set("paths", files, args, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
