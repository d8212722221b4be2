"""The regressions between JAX releases the findings' first screen shows: confirmed steps only (each once, the
largest per machine, benchmark and release pair), then one line counting the unconfirmed ones with their load."""

from __future__ import annotations


def regressions(report, confirmed: bool = True) -> list:
    """Each regression between consecutive JAX releases once, confirmed ones (or, with confirmed=False, the
    unconfirmed ones): the largest step per (machine, benchmark, from, to)."""
    groups: dict = {}
    for s in report.release_steps:
        if s.kind != "regression" or s.confirmed != confirmed:
            continue
        key = (s.machine, s.benchmark, s.before, s.after)
        if key not in groups or s.ratio > groups[key].ratio:
            groups[key] = s
    return sorted(groups.values(), key=lambda s: -s.ratio)


def reproduce(step) -> str:
    return f"asv compare jax-v{step.before} jax-v{step.after} --machine {step.machine}"


def _unconfirmed_line(report) -> str:
    from jaxci.analysis.releases import confirm_command

    unsure = regressions(report, confirmed=False)
    if not unsure:
        return ""
    machines = sorted({s.machine for s in unsure})
    loads = [s.load for s in unsure if s.load is not None]
    others = [s.others for s in unsure if s.others is not None]
    load = f"median load up to {max(loads):.2f}" if loads else "load not recorded"
    if others:
        load += f", other processes up to {max(others):.2f} CPU"
    return (f"{len(unsure)} unconfirmed step(s) past the factor on {', '.join(machines)} ({load}) are not shown "
            "here: noise until a quiet rerun confirms them (Regressions across JAX releases lists them; "
            + "; ".join(f"`{confirm_command(m)}`" for m in machines) + ").")


def regressions_md(report, limit: int = 6) -> str:
    """The first screen's regressions: confirmed steps only, then one line counting the unconfirmed ones."""
    from jaxci.report.text import table

    steps = regressions(report)
    unsure = _unconfirmed_line(report)
    if not steps:
        return (f"No confirmed regression between JAX releases. {unsure}\n") if unsure else ""
    rows = [[s.machine, s.benchmark.replace(".time_warm", ""), f"{s.before} -> {s.after}",
             f"x{s.ratio:,.0f}" if s.ratio >= 100 else f"x{s.ratio:.3g}", f"x{s.rerun_ratio:.3g}",
             s.undone_text(report.upgrade_factor), f"`{reproduce(s)}`"] for s in steps[:limit]]
    more = f"\n\n{len(steps) - limit} more below (Regressions across JAX releases)." if len(steps) > limit else ""
    tail = f"\n\n{unsure}" if unsure else ""
    head = ["machine", "kernel", "release", "ratio", "rerun", "undone today (vs the release before)", "reproduce"]
    return table(head, rows) + more + tail + "\n"
