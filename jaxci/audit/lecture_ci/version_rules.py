"""The CI audit's rule on JAX and numpyro versions: each install line of a workflow (and of the files it installs)
judged against the releases this project's records show regressed and against the project's pins, and the
packages the lectures import that nothing declares. A rule of jaxci.audit.lecture_ci.core's audit.
"""

from __future__ import annotations

from jaxci.audit.lecture_ci import edits as ed
from jaxci.audit.lecture_ci import installs, tier
from jaxci.audit.lecture_ci.report import VERSIONS, Finding

#: releases this project's records show as regressed, with the kernel they hurt and when a lecture uses it
REGRESSED = {
    ("jax", "0.11.1"): ("a fori_loop / scan writing into an array became quadratic in the steps on CPU "
                        "(docs/reference/incidents.md; reproduced, docs/reference/tooling notes: 200,000 steps "
                        "1.35 s vs 0.0011 s on 0.11.0 and 0.11.2)", "sequential"),
    ("jaxlib", "0.11.1"): ("the same 0.11.1 loop regression (the XLA side ships in jaxlib)", "sequential"),
}


def versions(audit, build_jobs) -> None:
    """Every jax / jaxlib / numpyro install line of every workflow and of the files they install, judged (a
    regressed release, no pin), and the packages the lectures import that nothing declares."""
    lines, errors = installs.collect(audit.root, audit.report.workflows)
    audit.report.installs, audit.report.errors = lines, audit.report.errors + errors
    if not audit.jax:
        return  # no lecture imports JAX or numpyro: the lines are listed, not judged
    sequential = any(f.sequential for f in audit.jax)
    for item in lines:
        _judge(audit, item, sequential, len(lines))
    gpu_build = any(tier.is_gpu(j.label, audit.catalogue) and not audit.moving(j) for j in build_jobs)
    wanted = ["jax"] + (["numpyro"] if any(f.uses_numpyro for f in audit.run) else [])
    for name in wanted:
        if not any(x.name == name for x in lines):
            _undeclared(audit, name, gpu_build)

def _judge(audit, item, sequential: bool, total: int) -> None:
    """One install line: pinned to a regressed release, or not pinned to one version."""
    pin = audit.pins.get(item.name)
    of = f" (one of {total} jax/jaxlib/numpyro install lines, each checked)" if total > 1 else ""
    bad = REGRESSED.get((item.name, item.version or ""))
    if bad and (bad[1] != "sequential" or sequential):
        users = [f.path for f in audit.jax if f.sequential]
        audit.add(Finding(VERSIONS, item.where, f"{item.name} pinned to {item.version}, a release regressed for a "
                         "kernel these lectures use" + of, bad[0] + "; lectures with sequential loops: "
                         + ", ".join(users[:5]) + (" ..." if len(users) > 5 else ""), "measured",
                         f"move the pin to {pin}" if pin else "move the pin off this release",
                         {"pinned": item.version, "pin": pin}, _pin_edit(item, pin)))
    elif item.version is None:
        what = "installed unpinned" if item.via == "workflow" else "is not pinned"
        audit.add(Finding(VERSIONS, item.where, f"{item.name} {what} (`{item.text}`){of}",
                         "a new release reaches the build untested (incidents: a JAX minor release made a "
                         "loop quadratic; a numpyro + JAX upgrade made NUTS 100-200x slower)", "static",
                         f"pin {item.name}=={pin} (the version this project benchmarks)" if pin
                         else f"pin {item.name}", {"spec": item.spec, "pin": pin}, _pin_edit(item, pin)))

def _undeclared(audit, name: str, gpu_build: bool) -> None:
    env = audit.report.env
    pin = audit.pins.get(name)
    where = env.files[0] if env.files else "(no environment file)"
    edits = []
    # a GPU build needs the CUDA wheels: plain `jax` would run every lecture on the CPU
    extra = "[cuda13]" if name == "jax" and gpu_build else ""
    if pin and where.endswith(".txt"):
        n = len((audit.root / where).read_text(encoding="utf-8").splitlines())
        edits = [ed.insert(where, n + 1, [f"{name}{extra}=={pin}"])]
    files = ", ".join(env.files) or "any environment file"
    audit.add(Finding(VERSIONS, where, f"{name} is not declared in {files} nor installed by a workflow",
                     f"{len(audit.jax)} lectures import JAX or numpyro; the version they run is whatever "
                     "the runner resolves that day", "static", f"declare {name}{extra}=={pin}" if pin
                     else f"declare {name}", {"pin": pin}, edits))

def _pin_edit(item, pin) -> list:
    """Pip entries get the project's pin (extras kept); conda entries are not patched (conda-forge may
    not carry that build)."""
    if not pin or item.manager != "pip" or not item.text:
        return []
    return [ed.replace(item.file, item.line, item.text, f"{item.name}{item.extras}=={pin}")]
