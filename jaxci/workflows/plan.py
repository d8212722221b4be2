"""The job matrix of a workflow, built from the catalogue and validated inputs.

bench.yml's plan job turns its dispatch inputs into one matrix entry per family (runs-on label, spot or
on-demand, backend, timeout) and one asv --bench regex per suite; jax-upgrade.yml's plan job turns a pull
request's base and head into the matrix of env_matrix/upgrade.toml's CPU and GPU family. Nothing in
.github/ lists a family, a label or a timeout: they all come from here, and leave as one-line step outputs.
The runner jobs' own requirements (asv and the tools beside it) come from the project's `bench` extra.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from jaxci import REPO_ROOT
from jaxci.catalogue import CatalogueError, Machine, catalogue_defaults, load_catalogue
from jaxci.policy.jobcost import timeout_minutes
from jaxci.results.upgrade import load_config
from jaxci.util.validate import bench_filter
from jaxci.workflows.inputs import (
    InputError,
    validate_commits,
    validate_families,
    validate_filter,
    validate_run_id,
    validate_scale,
    validate_sha,
)
from jaxci.workflows.suites import suites

SPOT_POLICIES = ("exploratory", "never")


def suite_regex(suite: str, bench: str | None) -> str:
    """One asv --bench regex selecting `suite` AND the user's filter (asv ORs repeated --bench flags).

    asv matches with re.search against "module.Class.method(params)"; the lookahead applies the user's
    filter from the start of that name, so anchored (^dispatch) and unanchored (TinyOp) filters both work.
    """
    if not bench:
        return f"^{suite}[.]"
    return f"^(?=.*?(?:{bench})){suite}[.]"


def check_suite_filters(text: str) -> list[str]:
    """JAXCI_SUITE_FILTERS as scripts/run-suites.sh takes it ("SUITE=REGEX ..."), checked before asv runs:
    each SUITE a module of benchmarks/, each REGEX suite_regex's own form, whose user filter passes the
    bound every filter passes (validate.bench_filter); anything else would reach asv unchecked."""
    known, out = set(suites()), []
    for item in text.split():
        suite, _, regex = item.partition("=")
        if suite not in known:
            raise InputError(f"JAXCI_SUITE_FILTERS: {item[:80]!r}: {suite[:40]!r} is not a suite of benchmarks/")
        inner = re.fullmatch(r"\^\(\?=\.\*\?\(\?:(.*)\)\)" + re.escape(suite) + r"\[\.\]", regex)
        user = bench_filter(f"JAXCI_SUITE_FILTERS {suite}", inner[1]) if inner else None
        if regex != suite_regex(suite, user):
            raise InputError(f"JAXCI_SUITE_FILTERS: {item[:80]!r}: expected {suite}=^{suite}[.] or the plan's "
                             f"{suite}=^(?=.*?(?:FILTER)){suite}[.]")
        out.append(item)
    if not out:
        raise InputError("JAXCI_SUITE_FILTERS: set but empty; unset it to run every suite")
    return out


def spot_for(machine: Machine, publish: bool) -> bool:
    """Spot only where the catalogue allows it ("exploratory") and the run is not published."""
    if machine.spot not in SPOT_POLICIES:
        raise CatalogueError(f"machines.{machine.name}.spot = {machine.spot!r}; expected one of {SPOT_POLICIES}")
    return machine.spot == "exploratory" and not publish


def matrix_entry(machine: Machine, run_id: str, spot: bool, timeout: int) -> dict:
    return {
        "family": machine.name,
        "runs_on": machine.runs_on_label(run_id, spot=spot),
        "spot": spot,
        "backend": machine.backend,
        "gpu": machine.has_gpu,
        "timeout_minutes": timeout,
    }


@dataclass(frozen=True)
class Plan:
    families: list[str]
    scale: str
    bench: str | None
    commits: list[str]
    publish: bool
    matrix: dict
    suite_filters: list[str]

    def outputs(self) -> dict[str, str]:
        """GitHub step outputs: one line each, built only from validated values."""
        return {
            "matrix": json.dumps(self.matrix, separators=(",", ":")),
            "scale": self.scale,
            "publish": "true" if self.publish else "false",
            "commits": " ".join(self.commits),
            "suite_filters": " ".join(self.suite_filters),
        }


def plan(families: str | None, scale: str | None, bench: str | None, commits: str | None, run_id: str | None,
         catalogue: dict[str, Machine] | None = None, defaults=None, suite_names: list[str] | None = None) -> Plan:
    """bench.yml: the dispatch inputs (or a schedule's none) -> families, matrix and per-suite filters."""
    catalogue = load_catalogue() if catalogue is None else catalogue
    defaults = catalogue_defaults() if defaults is None else defaults
    names = validate_families(families, catalogue)
    scale = validate_scale(scale)
    regex = validate_filter(bench)
    revs = validate_commits(commits)
    run_id = validate_run_id(run_id)
    publish = scale == "full"
    include = [matrix_entry(catalogue[n], run_id, spot_for(catalogue[n], publish),
                            timeout_minutes(catalogue[n], defaults, runs=len(revs))) for n in names]
    filters = [f"{s}={suite_regex(s, regex)}" for s in (suites() if suite_names is None else suite_names)]
    return Plan(names, scale, regex, revs, publish, {"include": include}, filters)


def upgrade_plan(base: str | None, head: str | None, run_id: str | None,
                 catalogue: dict[str, Machine] | None = None, defaults=None) -> dict[str, str]:
    """jax-upgrade.yml: both families of upgrade.toml, on-demand, timed for two runs (base and head)."""
    catalogue = load_catalogue() if catalogue is None else catalogue
    defaults = catalogue_defaults() if defaults is None else defaults
    config = load_config(catalogue=catalogue)
    base, head = validate_sha("base sha", base), validate_sha("head sha", head)
    run_id = validate_run_id(run_id)
    include = [matrix_entry(catalogue[n], run_id, False, timeout_minutes(catalogue[n], defaults, runs=2))
               for n in (config.cpu_family, config.gpu_family)]
    return {"matrix": json.dumps({"include": include}, separators=(",", ":")), "base": base, "head": head,
            "factor": f"{config.factor:g}", "scale": config.scale}


def write_outputs(outputs: dict[str, str], path: str | None) -> str:
    """Append `key=value` lines to the GITHUB_OUTPUT file at `path` (if any) and return them. A value that
    would span lines is refused before anything is written."""
    for key, value in outputs.items():
        if "\n" in value or "\r" in value:
            raise InputError(f"output {key} would span lines")
    text = "".join(f"{k}={v}\n" for k, v in outputs.items())
    if path:
        from jaxci.util import safewrite

        safewrite.write_text(path, text, append=True, option="--github-output")
    return text


def _project_name(requirement: str) -> str:
    name = re.match(r"[A-Za-z0-9._-]+", requirement.strip())
    return re.sub(r"[-_.]+", "-", name.group()).lower() if name else ""


def bench_requirements(names: list[str], pyproject: Path = REPO_ROOT / "pyproject.toml",
                       extra_name: str = "bench") -> list[str]:
    """The requirement lines of `names` in one of the project's extras (default `bench`, e.g. "asv==0.6.6"): a
    runner job installs these rather than the whole extra (JAX comes from env_matrix/, inside asv's
    environments), and the GPU capture's carried wheels are downloaded from them, so each pin is written once,
    in pyproject.toml."""
    try:
        extra = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"][extra_name]
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError) as exc:
        raise InputError(f"{pyproject}: no [project.optional-dependencies] {extra_name} list ({exc})") from None
    by_name = {_project_name(req): req for req in extra if isinstance(req, str)}
    missing = [n for n in names if _project_name(n) not in by_name]
    if missing:
        raise InputError(f"{pyproject}: {', '.join(map(repr, missing))} not in the {extra_name} extra "
                         f"(it holds {', '.join(by_name)})")
    return [by_name[_project_name(n)] for n in names]
