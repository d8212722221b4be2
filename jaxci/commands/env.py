"""`jaxci env [--kernels N] [--peak-mib MIB | --results DIR] [--machine FAMILY] [--pin-cpu[=true|false]] ...`.

The recommended JAX/XLA environment for N kernels on one device (the model: jaxci/workflows/envadvice.py), printed
in one --format; --github-env and --github-output also append it, and the jax-env action's outputs, to those
files, so the action makes one call. Refusals print `jaxci env: error: <one line>` last on stderr and exit 2.
Imports neither JAX nor NumPy (asv only with --results): a lecture repository's CI installs jaxci bare.
"""

from __future__ import annotations

import argparse
import os
import sys

from jaxci import REPO_ROOT
from jaxci.catalogue import CatalogueError
from jaxci.commands.argtypes import OneLineParser, refuse
from jaxci.util import safewrite
from jaxci.workflows.envadvice import FORMATS, MEASURED, AdviceError, advise, render, render_outputs


class _Ascii:
    """int/float that refuse digits other than ASCII 0-9: Python reads '３' (fullwidth) and '٢' (Arabic-Indic)
    as 3 and 2, but no workflow or shell means them as numbers; a pasted one is more likely a mistake."""

    def __init__(self, kind):
        self.kind, self.__name__ = kind, kind.__name__

    def __call__(self, text: str):
        if not text.isascii():
            bad = next(c for c in text if not c.isascii())
            raise argparse.ArgumentTypeError(f"{text[:40]!r} holds the non-ASCII character {bad!r} "
                                             f"(U+{ord(bad):04X}); write numbers with the digits 0-9")
        return self.kind(text)


def _optional(kind):
    """An option's type where empty text means "not given": the jax-env action passes unset inputs as ""."""
    def parse(text: str):
        return None if text == "" else kind(text)
    parse.__name__ = kind.__name__  # argparse names the type in "invalid float value"
    return parse


_optional_float = _optional(_Ascii(float))


def _true_or_false(text: str | None) -> bool:
    """--pin-cpu's value as the action passes its input: exactly "true" or "false" (absent: false)."""
    if text is None or text == "false":
        return False
    if text == "true":
        return True
    raise AdviceError(f"pin-cpu must be true or false, not {text[:80]!r}")


def _parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="jaxci env", description="Recommended JAX/XLA environment for N kernels "
                                "on one device. Empty values of the optional numbers and names mean not given.")
    p.add_argument("--kernels", type=_Ascii(int), default=1, help="notebook kernels running at once (default 1)")
    p.add_argument("--peak-mib", type=_optional_float, help="measured per-kernel peak device memory, MiB")
    p.add_argument("--results", metavar="DIR", type=_optional(str),
                   help="asv results directory to read the measured peak from (needs --machine)")
    p.add_argument("--machine", type=_optional(str),
                   help="catalogue family (device memory) and asv machine name (results)")
    p.add_argument("--device-memory-mib", type=_optional_float,
                   help="device memory, MiB (overrides the catalogue; without it or --machine, GPU 0 by NVML)")
    p.add_argument("--pin-cpu", nargs="?", const="true", metavar="true|false",
                   help="the lectures run on CPU (JAX_PLATFORMS=cpu); alone or =true, or =false")
    p.add_argument("--memory-budget", type=_optional_float,
                   help="fraction of device memory all kernels together may use "
                        "(default: env_matrix/memory_policies.toml)")
    p.add_argument("--cache-dir", default=os.path.expanduser("~/.cache/jax-compilation-cache"),
                   help="JAX persistent compilation cache directory")
    p.add_argument("--policy", choices=(MEASURED, "fraction"), default=MEASURED,
                   help="memory policy for several kernels: measured (default: the one a GPU measured keeping every "
                        "worker alive, allocation on demand) or fraction (a slice each: not measured on a GPU)")
    p.add_argument("--evidence", metavar="DIR", type=_optional(str), default=str(REPO_ROOT / "results"),
                   help="asv results holding the GPU concurrency measurements that say how many kernels survived "
                        "(default: this checkout's results/); more kernels than measured are flagged")
    p.add_argument("--slowest-cell-s", type=_optional_float, help="measured time of the slowest cell, seconds")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text; yaml (a workflow env: block); github (lines for $GITHUB_ENV); shell (exports); json")
    p.add_argument("--github-env", metavar="FILE",
                   help="also append the github lines to FILE ($GITHUB_ENV), only once all the advice succeeded")
    p.add_argument("--github-output", metavar="FILE", help="also append the jax-env action's outputs (policy, "
                   "safe-kernels, cell-timeout, cache-dir) to FILE ($GITHUB_OUTPUT)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        advice = advise(args.kernels, cache_dir=args.cache_dir, machine=args.machine, results=args.results,
                        peak_mib=args.peak_mib, device_mib=args.device_memory_mib,
                        pin_cpu=_true_or_false(args.pin_cpu), memory_budget=args.memory_budget,
                        slowest_cell_s=args.slowest_cell_s, policy=args.policy, evidence=args.evidence)
    except (AdviceError, CatalogueError) as exc:
        return refuse("jaxci env: error", exc)
    if args.format == "github":  # $GITHUB_ENV takes only KEY=value lines: the reasons go to the log
        print(render(advice, "text"), file=sys.stderr)
    try:  # everything rendered before anything is written: a refusal appends nothing
        text = render(advice, args.format)
        appends = []
        if args.github_output:
            appends.append(("--github-output", args.github_output, render_outputs(advice)))
        if args.github_env:  # last, so the environment is exported only if everything before it worked
            appends.append(("--github-env", args.github_env, render(advice, "github")))
    except AdviceError as exc:
        return refuse("jaxci env: error", exc)
    try:  # both files checked before either is appended to
        for option, path, _ in appends:
            safewrite.check_target(path, option=option)
        for option, path, block in appends:
            safewrite.write_text(path, block + "\n", append=True, option=option)
    except safewrite.UnsafeWrite as exc:
        return refuse("jaxci env: error", exc)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
