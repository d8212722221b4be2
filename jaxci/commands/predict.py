"""`jaxci predict --family F --kernel K --n N --dtype D [--device gpu|cpu] [--first-call] [--results DIR]
[--format text|json]`: one case through the runner model (docs/runner-model.md): predicted seconds, band and
inputs, or why it cannot. Kernels: matmul, solve, cholesky, elementwise, dispatch, scan, fori, while (n steps),
kalman_grad, series (the fresh-jit series), nuts (n iterations = chains x (warm-up + samples)), numpy_matmul
and pure_python (host, --device cpu)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jaxci.catalogue import CatalogueError
from jaxci.results.records import ResultsError


def main(argv: list[str] | None = None) -> int:
    from jaxci import REPO_ROOT
    from jaxci.analysis.model import KERNELS

    parser = argparse.ArgumentParser(prog="jaxci predict", description=__doc__.splitlines()[0])
    parser.add_argument("--family", required=True, help="catalogue family (env_matrix/machines.toml)")
    parser.add_argument("--kernel", required=True, choices=KERNELS)
    parser.add_argument("--n", type=int, help="size (elements, matrix order) or loop steps")
    parser.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    parser.add_argument("--device", choices=("gpu", "cpu"), help="default: gpu when the family has one")
    parser.add_argument("--precision", default="default", choices=("default", "highest"), help="matmul precision")
    parser.add_argument("--first-call", action="store_true", help="a cold first call: compile part + warm call")
    parser.add_argument("--results", default=str(REPO_ROOT / "results"), help="asv results directory")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)

    from jaxci.analysis.model import RunnerModel
    from jaxci.catalogue import load_catalogue
    from jaxci.results.records import load_results

    try:
        catalogue = load_catalogue(include_lab=True)
        rs = load_results(Path(args.results))
    except (ResultsError, CatalogueError) as exc:
        print(f"jaxci predict: {exc}", file=sys.stderr)
        return 2
    entry = catalogue.get(args.family)
    if entry is None or entry.is_lab:
        print(f"jaxci predict: {args.family!r} is not a catalogue family; the catalogue knows: "
              f"{', '.join(sorted(n for n, m in catalogue.items() if not m.is_lab))}", file=sys.stderr)
        return 2
    host = args.kernel in ("numpy_matmul", "pure_python")   # host work: the family's CPU
    device = args.device or ("gpu" if entry.has_gpu and not host else "cpu")
    model = RunnerModel.from_results(rs.latest(), rs.machines, catalogue)
    p = model.predict(args.family, args.kernel, args.n, args.dtype, device, first_call=args.first_call,
                      precision=args.precision)
    if args.format == "json":
        print(json.dumps(p.to_dict(), indent=1))
        return 0 if p else 1
    what = f"{args.family} {device} {args.kernel} n={args.n} {args.dtype}" + (" first call" if args.first_call else "")
    if not p:
        print(f"{what}: cannot predict: {p.reason}")
        return 1
    print(f"{what}: predicted {p.seconds:.4g} s (band {p.low:.3g} .. {p.high:.3g} s)")
    print(f"model: {p.basis}")
    for part in p.inputs.split("; "):
        print(f"  input: {part}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
