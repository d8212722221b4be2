"""`jaxci predict --family F --kernel K --n N --dtype D [--device gpu|cpu] [--first-call] [--results DIR]
[--format text|json] [--transfer-only]`: one case through the runner model (docs/runner-model.md): predicted
seconds, band and inputs, or why it cannot. The model takes the nearest evidence, as the audit and the report do:
the family's own results, else published measurements on its hardware (docs/reference/incidents.md,
published-measurements.md, labelled "published (source)"), else carried from another machine; `--transfer-only`
leaves the published ones out (what `jaxci published-score` scores). The kernels, what --n means for each
and which are host work are the one table in jaxci/analysis/kernels.py (`--kernel` lists them; `notebook_start` is
a fresh notebook kernel's fixed costs, --first-call for the build's first notebook)."""

from __future__ import annotations

import json
from pathlib import Path

from jaxci.analysis.provenance import describe, sentences
from jaxci.catalogue import CatalogueError
from jaxci.commands.argtypes import OneLineParser, ascii_int, refuse
from jaxci.results.records import ResultsError
from jaxci.util.validate import InputError, integer, one_line, quoted


def main(argv: list[str] | None = None) -> int:
    from jaxci import REPO_ROOT
    from jaxci.analysis.kernels import KERNELS

    parser = OneLineParser(prog="jaxci predict", description=__doc__.splitlines()[0])
    parser.add_argument("--family", required=True, help="catalogue family (env_matrix/machines.toml)")
    parser.add_argument("--kernel", required=True, choices=KERNELS)
    parser.add_argument("--n", type=ascii_int, help="size (elements, matrix order) or loop steps")
    parser.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    parser.add_argument("--device", choices=("gpu", "cpu"), help="default: gpu when the family has one")
    parser.add_argument("--precision", default="default", choices=("default", "highest"), help="matmul precision")
    parser.add_argument("--first-call", action="store_true", help="a cold first call: compile part + warm call")
    parser.add_argument("--results", default=str(REPO_ROOT / "results"), help="asv results directory")
    parser.add_argument("--model-input", action="append", default=[], metavar="MACHINE",
                        help="a local machine of --results whose results the model reads too (repeatable; by "
                             "default: the committed captures and full-scale catalogue runs only)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--transfer-only", action="store_true",
                        help="leave out the published measurements on the family's hardware (docs/reference/"
                             "incidents.md, published-measurements.md): our results and the sourced catalogue only; "
                             "by default they are inputs (nearest evidence), as in the audit and the report")
    args = parser.parse_args(argv)

    from jaxci.catalogue import load_catalogue
    from jaxci.results.records import load_results

    try:
        catalogue = load_catalogue(include_lab=True)
        rs = load_results(Path(args.results))
    except (ResultsError, CatalogueError) as exc:
        return refuse("jaxci predict", exc)
    entry = catalogue.get(args.family)
    if entry is None or entry.is_lab:
        return refuse("jaxci predict", f"{args.family!r} is not a catalogue family; the catalogue knows: "
                      f"{', '.join(sorted(n for n, m in catalogue.items() if not m.is_lab))}")
    try:
        device = checked(args, entry)
    except InputError as exc:
        return refuse("jaxci predict", exc)
    if not rs.records:  # an empty or wrong folder calibrates nothing: say so, as jaxci report does
        return refuse("jaxci predict", f"--results {args.results}: no asv result values in it (expected "
                      "<machine>/*.json from asv run)")
    try:
        model = runner_model(rs, catalogue, args.results, args.model_input, args.transfer_only)
    except ValueError as exc:
        return refuse("jaxci predict", one_line(str(exc)))
    p = model.predict(args.family, args.kernel, args.n, args.dtype, device, first_call=args.first_call,
                      precision=args.precision)
    what = (f"{args.family} {device} {args.kernel}" + (f" n={args.n}" if args.n is not None else "")
            + f" {args.dtype}" + (" first call" if args.first_call else ""))
    if not p:  # no prediction is a refusal like any other: one line on stderr, exit 2
        from jaxci.analysis.estimate import measure_command

        measure = f"; measure it: {measure_command(p.needs, args.family)}" if p.needs else ""
        return refuse("jaxci predict", f"{what}: cannot predict: {one_line(p.reason)}{measure}")
    if args.format == "json":
        print(json.dumps(p.to_dict(), indent=1))
        return 0
    if p.label == "published":  # the figure as published: no band of ours around it
        print(f"{what}: published {p.seconds:.4g} s (no spread published)")
    else:
        print(f"{what}: predicted {p.seconds:.4g} s (band {p.low:.3g} .. {p.high:.3g} s)")
    print(f"model: {p.basis}")
    for part in sentences(p.provenance):
        print(f"  input: {part}")
    print(f"rests on: {describe(p.sources) or 'nothing'}")
    if device == "cpu":
        from jaxci.policy.builds import ALIKE, cpu_twins

        twins = cpu_twins(model, catalogue, args.family)
        if twins:
            print(f"note: the model cannot tell this CPU from {', '.join(twins)}: it predicts them within "
                  f"{ALIKE:.0%} on every CPU case, its host probe included (the same physical cores and "
                  "single-thread speed; no sourced clock or vector width separates them); measure the family to "
                  "tell them apart")
    return 0


def runner_model(rs, catalogue, results: str, named: list[str], transfer_only: bool = False):
    """The runner model as the audit and the report build it (the published figures unless `transfer_only`, the
    committed fixed costs, the machines `named` read besides the committed kinds); ValueError with one line for a
    malformed published table or fixed-cost file, or a named machine not in the results."""
    from jaxci.analysis.model import RunnerModel
    from jaxci.evidence.inputs import reference
    from jaxci.modeldata import fixed_costs

    published = [] if transfer_only else reference()
    fixed = fixed_costs.load()
    unknown = [m for m in named if m not in rs.machines]
    if unknown:
        raise ValueError(f"--model-input {quoted(unknown[0], 80)}: no such machine in {results} "
                         f"(it holds: {', '.join(sorted(rs.machines)) or 'none'})")
    return RunnerModel.from_results(rs.latest(), rs.machines, catalogue, published, fixed, named=named)


def checked(args, entry) -> str:
    """The one check of predict's arguments before the model is asked: --n in the kernel's range (or absent
    where the kernel takes none), host kernels on the CPU, a GPU only where the family has one. Returns the
    device; raises InputError naming the option and the accepted range."""
    from jaxci.analysis.kernels import KERNEL

    host = KERNEL[args.kernel].host   # host work: the family's CPU
    device = args.device or ("gpu" if entry.has_gpu and not host else "cpu")
    size = KERNEL[args.kernel].size
    if size is None and args.n is not None:
        raise InputError(f"--n {one_line(args.n, 40)}: {args.kernel} takes no size; leave --n out")
    if size is not None and (args.n is not None or size.required):
        if args.n is None:
            raise InputError(f"--n: {args.kernel} needs a size: a whole number in [{size.low:,}, {size.high:,}] "
                             f"({size.meaning})")
        integer("--n", args.n, low=size.low, high=size.high, unit=f"{args.kernel}: {size.meaning}")
    if device == "gpu" and not entry.has_gpu:
        raise InputError(f"--device gpu: {args.family} has no GPU; use --device cpu")
    if host and device != "cpu":
        raise InputError(f"--device {device}: {args.kernel} is host work; use --device cpu")
    if host and args.first_call:
        raise InputError(f"--first-call: {args.kernel} is host work, predicted warm only")
    return device


if __name__ == "__main__":
    raise SystemExit(main())
