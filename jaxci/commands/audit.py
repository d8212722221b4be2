"""`jaxci audit PATH [--execute]`: which lectures of a repository belong on CPU, and why.

Exit status: 0 every lecture audited; 1 at least one lecture failed (unreadable, malformed, a cell error,
a timeout, a dead kernel, a missing kernel): it is reported with its cause and the rest are still audited;
2 bad usage (no such path, a bad option value, unknown --machine, unreadable --results).

The pipeline: parse -> validate -> scan (repo.audit_static, decided with --machine's thresholds) ->
execute (optional) -> render the table -> attach CI findings -> summary -> --emit-config. Each step is one
call in `main`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jaxci.commands.argtypes import OneLineParser, ascii_float, positive_float, refuse


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="jaxci audit", description=__doc__.splitlines()[0])
    p.add_argument("path", type=Path, help="lecture repository (or one lecture file)")
    p.add_argument("--execute", action="store_true",
                   help="run each lecture in a Jupyter kernel on the CPU and, where present, on the GPU")
    p.add_argument("--format", choices=["md", "csv", "json"], default="md", help="table format (default md)")
    p.add_argument("--output", type=Path, help="write the table here instead of stdout")
    p.add_argument("--summary", type=Path,
                   help="append a short Markdown summary here (default: $GITHUB_STEP_SUMMARY when set)")
    p.add_argument("--cell-timeout", type=ascii_float, default=600.0,
                   help="per-cell timeout while executing, seconds (default 600)")
    p.add_argument("--platforms", default=None,
                   help="comma-separated JAX platforms to execute on: cpu, cuda, rocm, tpu (default: cpu, plus "
                        "this machine's accelerator: jaxci.accel)")
    p.add_argument("--kernel", default=None, help="Jupyter kernel name (default: each notebook's own)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--machine", metavar="FAMILY", default=None,
                   help="runner family to judge for (e.g. g4dn.2xlarge): thresholds from its measured results "
                        "in --results, else predictions, else built-in (each verdict says which)")
    p.add_argument("--emit-config", metavar="FILE", type=Path, default=None,
                   help="write the CI change to apply (a patch: CPU-pinned kernels, per-lecture timeouts, "
                        "the jax-env step) to FILE")
    p.add_argument("--host-probe", metavar="SECONDS", type=positive_float, default=None,
                   help="judge with this host probe (host.PurePython int_sum n=1,000,000 seconds) instead of measuring "
                        "one: a re-judge of reused runs whose audit recorded none passes the probe of the host that "
                        "ran them (a --baseline that recorded one is used by itself)")
    p.add_argument("--published", metavar="FILE", type=Path, default=None,
                   help="the site's published build (`jaxci audit published`): its run times on the judged "
                        "family's hardware outrank the GPU side's prediction in the pin rule")
    from jaxci.commands import audit_failures
    from jaxci.commands.audit_ci import add_arguments  # the CI audit's options

    audit_failures.add_arguments(p)
    add_arguments(p)
    from jaxci.commands.audit_shard import add_arguments as shard_arguments  # --shard, --cache, --baseline

    shard_arguments(p)
    return p


def family_model(args):
    """The thresholds to decide with: --machine's (from --results, default this checkout's results/), or
    None (built-in). Raises FamilyError for an unknown family or unreadable results."""
    if not args.machine:
        return None
    from jaxci import REPO_ROOT
    from jaxci.audit.judging import family
    from jaxci.evidence.inputs import reference

    return family.from_results(getattr(args, "results", None) or (REPO_ROOT / "results"), args.machine,
                               published=reference())  # nearest evidence: published on the family's hardware


def every_family(args, model):
    """The runner model asked for every catalogue runner family (one model per audit; --machine's view reused),
    or None (said on stderr) when the results cannot be read."""
    from jaxci import REPO_ROOT
    from jaxci.audit.judging import every_family as every
    from jaxci.audit.judging.family import FamilyError
    from jaxci.evidence.inputs import reference
    from jaxci.modeldata import fixed_costs

    try:
        return every.build(getattr(args, "results", None) or (REPO_ROOT / "results"), published=reference(),
                           judged=model, fixed=fixed_costs.load())
    except (FamilyError, fixed_costs.FixedCostsError) as exc:
        print(f"jaxci audit: no per-family predictions: {exc}", file=sys.stderr)
        return None


def emit_config(args, verdicts) -> None:
    from jaxci.audit.writing import emit
    from jaxci.catalogue import load_catalogue
    from jaxci.commands.audit_runner import runner_dict

    config = emit.build(verdicts, args.machine, runner_dict(args, getattr(args, "runner_use", None)),
                        load_catalogue())
    from jaxci.commands.audit_ci import extend_emitted  # the CI audit's fixes join the same patch: one `git apply`

    extend_emitted(args, config)
    from jaxci.util import safewrite

    safewrite.write_text(args.emit_config, emit.render(config), option="--emit-config")
    print(f"jaxci audit: wrote {args.emit_config} ({len(config.changes)} file change(s))", file=sys.stderr)


class AuditStopped(Exception):
    """SIGINT or SIGTERM reached the audit: everything the lectures started is ended, nothing else written."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _interrupt(signum, frame):
    from jaxci.audit import runner

    if not runner.request_stop(signum):   # a lecture runs: it is ended, and run_notebook raises when it is out
        raise AuditStopped(signum)


#: `jaxci audit NAME ...`: each subcommand's module (imported only when it runs)
SUBCOMMANDS = {"merge": "audit_merge", "publish": "audit_publish", "published": "audit_published",
               "coverage": "audit_coverage", "kernel-requirements": "audit_kernel_requirements",
               "shard-plan": "audit_shard_plan"}


def main(argv: list[str] | None = None) -> int:
    """The audit, with SIGINT and SIGTERM ending it cleanly: every kernel process ended, one line
    "interrupted", exit 130 (SIGINT) or 143 (SIGTERM). `jaxci audit merge ...` combines shards (audit_merge);
    `jaxci audit publish ...` makes an executed audit fit to commit (audit_publish); `jaxci audit published ...`
    records a site's published build (audit_published); `jaxci audit coverage ...` how much of it an executed
    audit covers (audit_coverage); `jaxci audit shard-plan ...` it split over N shards (audit_shard_plan);
    `jaxci audit kernel-requirements ...` a kernel's requirements from an environment file."""
    if argv and argv[0] in SUBCOMMANDS:
        import importlib

        return importlib.import_module(f"jaxci.commands.{SUBCOMMANDS[argv[0]]}").main(argv[1:])
    import signal

    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[signum] = signal.signal(signum, _interrupt)
        except ValueError:  # not the main thread: leave the handlers alone
            pass
    from jaxci.util.safewrite import UnsafeWrite
    from jaxci.util.validate import InputError

    try:
        return _main(argv)
    except (UnsafeWrite, InputError) as exc:  # an output that cannot be written (or a path a patch cannot hold)
        return refuse("jaxci audit", exc)
    except Exception as exc:
        from jaxci.audit.runner import LectureStopped

        if not isinstance(exc, (AuditStopped, LectureStopped)):
            raise
        return _interrupted(exc.signum, previous)
    except KeyboardInterrupt:
        return _interrupted(signal.SIGINT, previous)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _interrupted(signum: int, previous: dict) -> int:
    import signal

    from jaxci.audit.runner.ending import end_kernels

    for handled in previous:
        signal.signal(handled, signal.SIG_IGN)   # a second ^C must not interrupt the clean-up
    ended = end_kernels()
    print(f"jaxci audit: interrupted ({signal.Signals(signum).name}): stopped; every process a lecture "
          f"started was ended{f' ({len(ended)} still running then)' if ended else ''}", file=sys.stderr)
    return 128 + signum


def _check_options(args) -> list[str] | None:
    """Every option checked before anything runs (a bad one must not cost a whole execution): the
    chosen platforms, or None for the default. Raises InputError."""
    from jaxci.commands.audit_ci import summary_target
    from jaxci.util.validate import number, platforms, writable_file

    summary, summary_option = summary_target(args)
    for option, target in (("--output", args.output), (summary_option, summary),
                           ("--ci-output", args.ci_output), ("--ci-patch", args.ci_patch),
                           ("--emit-config", args.emit_config)):
        if target is not None:
            writable_file(option, target)
            _not_an_input(option, target, args)
    number("--cell-timeout", args.cell_timeout, low=0, high=86_400, unit="seconds")
    from jaxci.commands import audit_shard

    audit_shard.check(args)
    chosen = platforms("--platforms", args.platforms) if args.platforms is not None else None
    if args.execute:
        _accelerators_here(chosen or [])
    return chosen


def _accelerators_here(chosen: list[str]) -> None:
    """Each accelerator platform --platforms names is this machine's: a lecture that never starts JAX (a NumPy
    one) would otherwise run on the CPU and be recorded as a completed run on the accelerator, a measurement of a
    device that did not run (jaxci.accel decides, JAXCI_ACCELERATOR first). Raises InputError."""
    from jaxci.accel import DEVICE_OF, accelerator_platform, missing_reason
    from jaxci.util.validate import InputError

    try:
        accelerator_platform()   # what the default platforms are read from, too
    except ValueError as exc:   # JAXCI_ACCELERATOR set to a name jaxci.accel does not know
        raise InputError(" ".join(str(exc).split())) from None
    for platform in chosen:
        reason = missing_reason(DEVICE_OF[platform])
        if reason:
            raise InputError(f"--platforms {platform}: {reason.split(':')[0]}: a run there would be the CPU's, "
                             f"recorded as a {platform} run; run it where JAX has a {platform} device "
                             "(JAXCI_ACCELERATOR names it where /sys does not show it)")


def _not_an_input(option: str, target: Path, args) -> None:
    """An output may not replace what the audit reads: a lecture under the audited folder (a notebook, or a
    Markdown file that is a MyST notebook), --baseline, --shard-times or --build-status."""
    from jaxci.audit.reading.static import is_lecture
    from jaxci.util.validate import InputError, inside, not_an_input

    not_an_input(option, target, (getattr(args, "baseline", None), getattr(args, "shard_times", None),
                                  getattr(args, "build_status", None)), "an input of the audit")
    target = Path(target)
    if target.is_file() and inside(target.resolve(), args.path.resolve(), or_above=False) \
            and (target.suffix == ".ipynb" or (target.suffix == ".md" and is_lecture(target))):
        raise InputError(f"{option} {target}: is a lecture under {args.path} that the audit reads; write the "
                         "output elsewhere")


def _write_outputs(args, verdicts, text: str) -> None:
    """The table to --output or stdout, and the short summary to --summary / $GITHUB_STEP_SUMMARY."""
    from jaxci.audit.writing import render
    from jaxci.commands.audit_ci import summary_target
    from jaxci.util import safewrite

    if args.output:
        safewrite.write_text(args.output, text, option="--output")
    else:
        sys.stdout.write(text)
    summary_path, option = summary_target(args)
    if summary_path:
        summary = render.summary(verdicts, args.execute)
        if args.format == "md" or args.output:
            summary += "\n" + render.to_markdown(verdicts, args.execute)
        safewrite.write_text(summary_path, summary, append=True, option=option)


def _main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not args.path.exists():
        return refuse("jaxci audit", f"{args.path}: no such file or directory")
    from jaxci.audit import repo
    from jaxci.audit.judging.family import FamilyError
    from jaxci.audit.writing import render
    from jaxci.commands import audit_failures
    from jaxci.commands.audit_ci import attach, wanted
    from jaxci.commands.audit_runner import attach_published, judged_family, runner_use, with_runner
    from jaxci.util.validate import InputError

    use = runner_use(args)
    said = [judged_family(args, use)]
    try:
        chosen = _check_options(args)
        model = family_model(args)
        said.append(attach_published(args, model))
    except (InputError, FamilyError) as exc:
        return refuse("jaxci audit", exc)
    args.runner_use = use  # the JSON's `runner` block and --emit-config read it
    for line in filter(None, said):  # job ids and labels come from the repository: one safe log line each
        from jaxci.util.quoting import log

        print(f"jaxci audit: {log(line)}", file=sys.stderr)
    missing = model.missing if model is not None else ""
    if missing:  # never a silent fallback: said first, on stderr and atop a Markdown table
        print(f"jaxci audit: {missing}", file=sys.stderr)
    verdicts = repo.audit_static(args.path, model)
    try:
        built = audit_failures.built(args, verdicts)  # read before anything runs
    except InputError as exc:
        return refuse("jaxci audit", exc)
    if not wanted(args):  # else the CI audit says the book config's errors (one line each)
        for error in dict.fromkeys(v.config.error for v in verdicts if v.config and v.config.error):
            print(f"jaxci audit: {error}", file=sys.stderr)
    if not verdicts:
        print(f"jaxci audit: no lectures (.ipynb or MyST .md) under {args.path}", file=sys.stderr)
        if not wanted(args):  # nothing audited is not "all fine"
            return 2
    plan = None
    if args.execute:
        from jaxci.commands import audit_shard

        plan = audit_shard.prepare(args, verdicts)
        from jaxci.audit.runner import host_probe

        runs = repo.Runs(tuple(chosen or repo.platforms_here()), args.cell_timeout, args.kernel,
                         reuse=plan.reuse, progress=not args.no_progress, weights=plan.weights,
                         probe=host_probe.given(args.host_probe) if args.host_probe else None,
                         baseline_probe=plan.baseline_probe)
        preflight = repo.execute(verdicts, runs, model=model, families=every_family(args, model))
        args.probe_used = preflight.probe
        if preflight.message():
            print(f"jaxci audit: {preflight.message()}", file=sys.stderr)
        for line in plan.reuse.refused:  # a cached run refused by the checks, or one that could not be stored
            print(f"jaxci audit: --cache/--baseline: {line}", file=sys.stderr)
    audit_failures.label(verdicts, built)
    text = {"md": lambda: render.to_markdown(verdicts, args.execute), "csv": lambda: render.to_csv(verdicts),
            "json": lambda: render.to_json(verdicts, args.execute)}[args.format]()
    text = attach(args, verdicts, text)  # the repository's CI, when it has .github/workflows
    text = with_runner(args, text)
    text = audit_shard.finish(args, plan, text) if plan else text  # run keys, reused runs, the shard
    text = audit_failures.attach_environment(args, text)  # the kernel against the environment file
    if missing and args.format == "md":
        text = f"**{missing}**\n\n" + text
    _write_outputs(args, verdicts, text)
    if args.emit_config:
        emit_config(args, verdicts)
    failed = [v for v in verdicts if v.failed and (plan is None or plan.owns(v.path))]  # a shard: its own
    for v in failed:
        print(f"jaxci audit: {v.path}: {v.status}: {'; '.join(v.errors)}", file=sys.stderr)
    return 1 if failed else 0

