"""The audited repository's own build workflow rewritten as a sharded build (issue 79 item 5): the patch that carries
out a split or shard decision.

The repository's build job (the one whose step runs `jb build` / `jupyter-book build`) is kept as it is, step for
step, in two jobs: the shard jobs (a matrix over the plan's shards, each on its family's runner: the GPU shard on
the job's own runner label, a CPU shard on the CPU family's) run its set-up steps, `jaxci sharded share`, its build
step and upload their execution cache; the site job runs the set-up, merges the caches and runs the build step
once, then uploads `_build` as the job did. A set-up step that needs a GPU (it runs nvidia-smi) runs in the GPU
shard only. The templates (templates/build-sharded-*.yml) are the same workflow for a repository written anew."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from jaxci.workflows.sharded import ShardError, ShardPlan

PLAN_PATH = ".github/jaxci-shards.json"
PLACEHOLDER = "0" * 40  # replaced by one commit of jax-ci-bench (a full SHA), as in the templates
_BUILD = re.compile(r"\b(jb|jupyter-book)\s+build\b")
_GPU_ONLY = re.compile(r"\bnvidia-smi\b")
UPLOAD = "actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f"  # v7.0.0, as the templates pin it
DOWNLOAD = "actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c"  # v8.0.1


def build_job(flow: dict) -> tuple[str, int]:
    """(the job's name, its build step's index): the one job whose step runs a Jupyter Book 1.x build."""
    found = [(name, i) for name, job in (flow.get("jobs") or {}).items() if isinstance(job, dict)
             for i, step in enumerate(job.get("steps") or []) if isinstance(step, dict)
             and _BUILD.search(str(step.get("run", "")))]
    if len(found) != 1:
        raise ShardError(f"the workflow has {len(found)} Jupyter Book build steps (`jb build`), not one: "
                         "name the workflow whose job builds the book with --workflow")
    return found[0]


def book_and_output(run: str) -> tuple[str, str]:
    """(the book's folder, the folder `_build` goes under: --path-output, else the book) of a `jb build` line."""
    found = next(m for m in map(_BUILD.search, run.splitlines()) if m is not None)
    words = shlex.split(found.string[found.start():])
    book = next((w for w in words[2:] if not w.startswith("-")), ".")
    return book, next((words[i + 1] for i, w in enumerate(words[:-1]) if w == "--path-output"), book)


def runner_label(family: str, own_label, own_family: str | None, catalogue: dict):
    """A shard's `runs-on`: the build job's own label for its own family, a GitHub-hosted family by its name, a
    RunsOn family by the job's label with the family swapped."""
    if family == own_family:
        return own_label
    if catalogue[family].runner == "github":
        return family
    if isinstance(own_label, str) and "family=" in own_label:
        return re.sub(r"family=[^/]+", f"family={family}", own_label)
    raise ShardError(f"no runner label for {family}: the build job's runs-on names no RunsOn family to swap")


def _setup(steps: list, gpu_only_if: str | None) -> list:
    """The build job's steps before its build, uploads left out; a GPU-only step gated to the GPU shard."""
    out = []
    for step in steps:
        if str(step.get("uses", "")).startswith("actions/upload-artifact"):
            continue
        step = dict(step)
        if _GPU_ONLY.search(str(step.get("run", ""))):
            if gpu_only_if is None:
                continue
            step["if"] = gpu_only_if
        out.append(step)
    return out


def _install(shell: dict, ref: str) -> dict:
    """jaxci into the build's environment, pinned to one commit (a full SHA)."""
    return {"name": "install jaxci (jaxci sharded)", **shell,
            "run": f'python -m pip install "jax-ci-bench @ git+https://github.com/jax-ci-bench/jax-ci-bench@{ref}"'}


def sharded_workflow(flow: dict, plan: ShardPlan, own_family: str | None, catalogue: dict,
                     jaxci_ref: str = PLACEHOLDER) -> dict:
    """The workflow `flow` with its build job made a shard matrix and a site job (the other jobs kept)."""
    name, b = build_job(flow)
    job = flow["jobs"][name]
    steps = job["steps"]
    build = steps[b]
    book, out = book_and_output(build["run"])
    cache = (Path(out) / "_build" / ".jupyter_cache").as_posix()
    include = [{"shard": s.name, "device": s.device,
                "runs-on": runner_label(s.runs_on, job.get("runs-on"), own_family, catalogue)} for s in plan.shards]
    site_label = next((i["runs-on"] for i in include if i["device"] == "cpu"), include[0]["runs-on"])
    shell = {"shell": build["shell"]} if "shell" in build else {}
    shard_job = {k: v for k, v in job.items() if k not in ("steps", "runs-on")}
    shard_job.update({
        "name": "shard ${{ matrix.shard }}",
        "strategy": {"fail-fast": False, "matrix": {"include": include}},
        "runs-on": "${{ matrix.runs-on }}",
        "steps": [*_setup(steps[:b], "${{ matrix.device == 'gpu' }}"), _install(shell, jaxci_ref),
                  {"name": "keep this shard to its own pages (jaxci sharded)", **shell,
                   "env": {"SHARD": "${{ matrix.shard }}"},
                   "run": f"jaxci sharded share --plan {PLAN_PATH} --shard \"${{SHARD}}\" --book "
                          f"{book} --engine jupyter-book"},
                  {**build, "name": f"{build.get('name', 'build')} (this shard's pages)"},
                  {"name": "upload this shard's execution cache", "if": "${{ !cancelled() }}", "uses": UPLOAD,
                   "with": {"name": "shard-cache-${{ matrix.shard }}", "path": cache,
                            "include-hidden-files": True, "retention-days": 1}}]})
    site_job = {k: v for k, v in job.items() if k not in ("steps", "runs-on")}
    site_job.update({
        "needs": f"{name}-shards", "if": "${{ !cancelled() }}", "runs-on": site_label,
        "steps": [*_setup(steps[:b], None), _install(shell, jaxci_ref),
                  {"name": "download the shards' execution caches", "uses": DOWNLOAD,
                   "with": {"pattern": "shard-cache-*", "path": "shard-caches"}},
                  {"name": "merge the shards' execution caches (jaxci sharded)", **shell,
                   "run": f"jaxci sharded merge --engine jupyter-book --book {out} shard-caches/*"},
                  {**build, "name": f"{build.get('name', 'build')} (once, from the merged cache)"},
                  *steps[b + 1:]]})
    jobs = {}
    for key, value in flow["jobs"].items():
        if key == name:
            jobs[f"{name}-shards"], jobs[name] = shard_job, site_job
        else:
            jobs[key] = value
    return {**flow, "jobs": jobs}


def dump(flow: dict) -> str:
    """YAML a runner reads, as a person would write it: `on` (which YAML 1.1 loads as true) written back as the key
    `on`, no anchors for the steps the two jobs share, a multi-line script as a literal block."""
    import yaml

    class Dumper(yaml.SafeDumper):
        def ignore_aliases(self, data) -> bool:
            return True

    def text_node(dumper, value: str):
        style = "|" if "\n" in value.rstrip("\n") or value.endswith("\n") else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text_node)
    text = yaml.dump({("on" if k is True else k): v for k, v in flow.items()}, Dumper=Dumper, sort_keys=False,
                     width=120, allow_unicode=True)
    return re.sub(r"^'on':", "on:", text, flags=re.M)  # a top-level key only: nested ones are indented


def patch(checkout: Path, workflow: str, plan: ShardPlan, own_family: str | None, catalogue: dict,
          header: str, jaxci_ref: str = PLACEHOLDER) -> str:
    """The patch, applied from the checkout's root: the workflow rewritten as a sharded build, and the plan."""
    from jaxci.util import safeio, safeyaml
    from jaxci.util.patch import file_diff

    path = checkout / workflow
    try:
        old = safeio.read_text(path)
        flow = safeyaml.parse(old, workflow)
    except (OSError, safeio.UnsafeFile) as exc:
        raise ShardError(f"{path}: cannot read the workflow ({getattr(exc, 'reason', None) or exc})") from None
    if not isinstance(flow, dict):
        raise ShardError(f"{path}: not a workflow (no mapping)")
    new = f"# Sharded by jaxci (jaxci sharded patch): {plan.option}\n" + dump(
        sharded_workflow(flow, plan, own_family, catalogue, jaxci_ref))
    plan_text = json.dumps(plan.to_doc(), indent=1) + "\n"
    return header.rstrip("\n") + "\n\n" + file_diff(workflow, old, new) + file_diff(PLAN_PATH, None, plan_text)
