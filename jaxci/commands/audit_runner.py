"""The runner a lecture repository builds on, as `jaxci audit` uses it: the judged family defaults to the one its
build jobs run on (a --machine that differs is a what-if), the site's published build (--published) joins the
judged family's model, and the JSON output carries the `runner` block, the patch's pins and the whole build
(jaxci.policy.wholebuild), so the audit, its patch and the report say the same.
"""

from __future__ import annotations

import json
from pathlib import Path


def runner_use(args):
    """The runner family the repository's build jobs use (jaxci.audit.lecture_ci.runner_use), or None where the
    path has no workflows. Without --machine it becomes the judged family; a --machine that differs is a
    what-if."""
    if not (Path(args.path).is_dir() and (Path(args.path) / ".github" / "workflows").is_dir()):
        return None
    from jaxci.audit.lecture_ci import runner_use as ru
    from jaxci.audit.lecture_ci.workflows import read_workflows
    from jaxci.catalogue import CatalogueError, load_catalogue

    try:
        return ru.from_workflows(read_workflows(Path(args.path)), load_catalogue())
    except CatalogueError:
        return None


def judged_family(args, use) -> str | None:
    """Set --machine from the build's runner when not given (said in the JSON's `runner` block); the line that says
    a --machine naming another family is a what-if."""
    if use is None or use.family is None:
        return None
    if not args.machine:
        args.machine = use.family
        return None
    if use.what_if(args.machine):
        return (f"what-if: judged for {args.machine}, but the build jobs run on {use.family} "
                f"({'; '.join(use.jobs[:3])}): nothing is pinned in jobs that run elsewhere")
    return None


def published_record(args):
    """--published's record, read once per command: the verdicts (attach_published) and the build block share it.
    Raises InputError for an unreadable record."""
    if args.published is None:
        return None
    if getattr(args, "published_record", None) is None:
        from jaxci.results import published_build
        from jaxci.util.validate import InputError

        try:
            args.published_record = published_build.read(args.published)
        except published_build.PublishedError as exc:
            raise InputError(f"--published {exc}") from None
    return args.published_record


def attach_published(args, model) -> str | None:
    """--published's record onto the judged family's model when it ran on the same hardware; a line saying
    why not otherwise. Raises InputError for an unreadable record."""
    record = published_record(args)
    if record is None or model is None:
        return None
    from jaxci.catalogue import load_catalogue
    from jaxci.policy.placement import published_for

    model.published = published_for(record, model.family, load_catalogue())
    if model.published is None:
        return (f"--published: the build ran on {record.family}, not {model.family}'s hardware: its run times are "
                "not used")
    return None


def with_runner(args, text: str) -> str:
    """The JSON output with its `runner` block: the family judged, the family the build runs on, and whether the
    judged one is a what-if (the report and the patch read it, never --machine's words)."""
    use = getattr(args, "runner_use", None)
    if args.format != "json":
        return text
    data = json.loads(text)
    data["runner"] = {"judged": args.machine, "what_if": bool(use and use.what_if(args.machine)),
                      **(use.as_dict() if use else {"family": None, "jobs": [], "others": []})}
    unpinned = no_pins_why(args, use)
    if unpinned:  # `pin_to_cpu` is what the patch pins: nothing on a CPU runner or for another family
        what_if = data.pop("pin_to_cpu", [])
        data["pin_to_cpu"], data["unpinned_why"] = [], unpinned
        if data["runner"]["what_if"]:
            data["what_if_pin_to_cpu"] = what_if
    probe = getattr(args, "probe_used", None)
    if probe is not None and probe.seconds is not None:
        from jaxci.audit.runner.host_probe import as_dict

        data["host_probe"] = as_dict(probe)
    build = build_block(args, data, use)
    if build is not None:
        data["build"] = build
    decision = decision_block(args, data, use)
    if decision is not None:
        data["runner_decision"] = decision
    from jaxci.audit.writing.record import dumps

    return dumps(data)


def runner_dict(args, use) -> dict | None:
    """The runner block --emit-config and the JSON share (None: no workflows read)."""
    return {"judged": args.machine, "what_if": use.what_if(args.machine), **use.as_dict()} if use else None


def no_pins_why(args, use) -> str | None:
    """Why the patch pins nothing (jaxci.audit.writing.emit.pinning_runner), or None."""
    from jaxci.audit.writing.emit import pinning_runner
    from jaxci.catalogue import CatalogueError, load_catalogue

    try:
        catalogue = load_catalogue()
    except CatalogueError:
        catalogue = None
    return pinning_runner(runner_dict(args, use), catalogue)


def build_block(args, data: dict, use) -> dict | None:
    """The whole build on the judged family (jaxci.policy.wholebuild, the function the report's build section and
    the sheet's row 6 use), or None without a catalogue family to judge."""
    from jaxci.analysis.lecture_record import AuditView
    from jaxci.catalogue import CatalogueError, load_catalogue
    from jaxci.policy import wholebuild
    from jaxci.util.validate import InputError

    try:
        catalogue = load_catalogue()
    except CatalogueError:
        return None
    if args.machine not in catalogue:
        return None
    try:
        published = published_record(args)   # read once: attach_published's
    except InputError:
        published = None  # said once already by attach_published (or no family judged)
    found = wholebuild.whole_build(AuditView.from_dict(data), Path(args.path).resolve().name, args.machine,
                                   catalogue[args.machine], published, catalogue, use.family if use else None)
    return wholebuild.as_dict(found)


def decision_block(args, data: dict, use) -> dict | None:
    """The runner decision (stay, move, split or shard) for the family the build jobs run on, by the function the
    report's first section, every family's page and the sheet's row 6 use (jaxci.policy.runner_decision.decide);
    None without that family in the catalogue or a lecture predicted on every family."""
    from jaxci.analysis.lecture_record import AuditView
    from jaxci.catalogue import CatalogueError, load_catalogue
    from jaxci.policy import runner_decision as rd
    from jaxci.util.validate import InputError

    try:
        catalogue = load_catalogue()
    except CatalogueError:
        return None
    family = use.family if use else None
    if family not in catalogue:
        return None
    try:
        published = published_record(args)
    except InputError:
        published = None
    found = rd.decide(AuditView.from_dict(data), Path(args.path).resolve().name, family, catalogue,
                      rd.published_minutes(published, family))
    return None if found is None else {k: v for k, v in rd.as_dict(found).items() if k != "repository"}
