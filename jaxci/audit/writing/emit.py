"""`jaxci audit --emit-config FILE`: the change to make in the lecture repository, as a patch to apply.

What it writes (a unified diff, `git apply FILE` from the audited folder; the text before the first diff is
the explanation, which git ignores):
- a Jupyter kernelspec `python3-jax-cpu` (kernel.json with `env: {JAX_PLATFORMS: cpu}`) under
  `_jaxci/kernels/`, and each lecture to pin switched to it in its own metadata (`kernelspec.name`);
- per-lecture timeouts where the audit measured a cell slower than the configured timeout (`--execute`):
  `mystnb: execution_timeout` in the lecture's metadata;
- the kernelspec install, as a step inserted before the build step of every workflow job that executes notebooks
  (jaxci.audit.lecture_ci.edits.join_emitted; as text in the explanation only where no such job is found), and the
  jax-env action step as text;
- lectures whose purpose is to show the GPU backend (they print jax.devices() / the platform, run nvidia-smi, and
  have little work) are never pinned: the explanation lists them as "left on the GPU: narrative".

The settings it relies on are stated in the explanation (SETTINGS below). Changes are `FileChange`s collected
in an `EmittedConfig`, so other producers (e.g. workflow edits) can add theirs before rendering.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from jaxci.audit.judging.judge import Verdict, pin_list, placed_on_cpu
from jaxci.util import quoting
from jaxci.util.patch import diff_path, file_diff

KERNEL = "python3-jax-cpu"
KERNEL_DIR = f"_jaxci/kernels/{KERNEL}"
#: how every command names a pin: the lecture's own kernel, never JAX_PLATFORMS=cpu for the whole job
PIN_HEADING = (f"Pin to the CPU, each lecture on its own (`kernelspec.name: {KERNEL}`; `--emit-config` writes it), "
               "not `JAX_PLATFORMS=cpu` for the job")
#: what the build job runs before the build (relative to the repository root, where a job's steps start)
INSTALL_CMD = f"jupyter kernelspec install --user --name {KERNEL} {KERNEL_DIR}"
INSTALL_STEP = "Install the JAX-on-CPU kernel for pinned lectures (jaxci audit)"
SETTINGS = [
    "Jupyter Book 1 / MyST-NB runs each notebook with the Jupyter kernel named in its own metadata "
    "(`kernelspec.name`, the MyST front matter or the .ipynb metadata); jupyter_client starts that kernel with "
    "the `env` of its kernel.json, so JAX_PLATFORMS=cpu reaches the pinned lectures only. The kernelspec must "
    f"be installed in the build's environment first (`{INSTALL_CMD}`, the step this patch adds before each "
    "build step; `--name` keeps the kernel's name whatever the folder is called).",
    "`execute.execute_notebooks` (Jupyter Book) / `nb_execution_mode` (MyST-NB) must not be `off`; with "
    "`cache`, a changed kernelspec or metadata makes the lecture re-execute once.",
    "Per-lecture timeouts use MyST-NB's per-file configuration: `mystnb: execution_timeout: N` in the front "
    "matter (.md) or `metadata.mystnb.execution_timeout` (.ipynb), which overrides the global "
    "`execute.timeout` / `nb_execution_timeout` for that file.",
    "Jupyter Book 2 / mystmd (`myst.yml`) also starts the kernel named in `kernelspec`; it does not read "
    "`mystnb` metadata: the timeout lines do nothing there (not verified here).",
]


@dataclass
class FileChange:
    path: str  # relative to the audited folder
    old: str | None  # None: a new file
    new: str
    why: str


@dataclass
class EmittedConfig:
    changes: list[FileChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)  # YAML workflow steps, as text
    narrative: list[str] = field(default_factory=list)  # "path: evidence" of lectures left on the GPU (narrative)
    settings: list[str] = field(default_factory=lambda: list(SETTINGS))
    pages: list[str] = field(default_factory=list)  # what the pins change on the pages (notes, outputs)
    installs: list[str] = field(default_factory=list)  # in-notebook JAX installs that undo the pin, with their line
    packages: list[str] = field(default_factory=list)  # each package pin with its reason (the CI audit's)


def kernel_json() -> str:
    spec = {"argv": ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (JAX on CPU)", "language": "python",
            "env": {"JAX_PLATFORMS": "cpu"}}
    return json.dumps(spec, indent=2) + "\n"


def _front_matter_edit(text: str, kernel: str | None, timeout: int | None) -> str | None:
    """A MyST notebook's text with kernelspec.name and/or mystnb.execution_timeout set; None if the file has
    no front matter to edit (the patch then says so instead of guessing)."""
    m = re.match(r"^---\n(.*?\n)---\n", text, re.S)
    if not m:
        return None
    head = m.group(1)
    if kernel:
        block = re.search(r"^kernelspec:\s*\n((?:[ \t]+.*\n)*)", head, re.M)
        if block:
            body = block.group(1)
            body = re.sub(r"^([ \t]+name:).*$", rf"\1 {kernel}", body, count=1, flags=re.M) \
                if re.search(r"^[ \t]+name:", body, re.M) else body + f"  name: {kernel}\n"
            body = re.sub(r"^([ \t]+display_name:).*$", r"\1 Python 3 (JAX on CPU)", body, count=1, flags=re.M)
            head = head[:block.start(1)] + body + head[block.end(1):]
        else:
            head += f"kernelspec:\n  display_name: Python 3 (JAX on CPU)\n  language: python\n  name: {kernel}\n"
    if timeout:
        if re.search(r"^mystnb:\s*\n", head, re.M):
            if re.search(r"^[ \t]+execution_timeout:", head, re.M):
                head = re.sub(r"^([ \t]+execution_timeout:).*$", rf"\1 {timeout}", head, count=1, flags=re.M)
            else:
                head = re.sub(r"^mystnb:\s*\n", f"mystnb:\n  execution_timeout: {timeout}\n", head, count=1,
                              flags=re.M)
        else:
            head += f"mystnb:\n  execution_timeout: {timeout}\n"
    return "---\n" + head + "---\n" + text[m.end():]


def _ipynb_edit(text: str, kernel: str | None, timeout: int | None) -> str | None:
    try:
        nb = json.loads(text)
    except ValueError:
        return None
    meta = nb.setdefault("metadata", {})
    if kernel:
        meta["kernelspec"] = {**meta.get("kernelspec", {}), "name": kernel,
                              "display_name": "Python 3 (JAX on CPU)", "language": "python"}
    if timeout:
        meta.setdefault("mystnb", {})["execution_timeout"] = timeout
    indent = 1 if text.startswith("{\n \"") else 2
    return json.dumps(nb, indent=indent, ensure_ascii=False) + "\n"


def _needs_timeout(v: Verdict) -> int | None:
    """The proposed timeout, when a measured cell would not fit the configured one."""
    if not v.proposed_timeout:
        return None
    if v.timeout is None or v.proposed_timeout > v.timeout or v.over_timeout:
        return int(v.proposed_timeout)
    return None


def narrative(v: Verdict) -> str:
    """Why a lecture's purpose is to show the GPU backend, or '' (jaxci.audit.judging.pinning.narrative_of)."""
    from jaxci.policy.placement import narrative_of

    return narrative_of(v.scan.gpu_shown, v.regime)


def pinning_runner(runner: dict | None, catalogue: dict | None) -> str | None:
    """Why the patch pins nothing ('' or None: it may pin): the build runs on a CPU family, or the judged family
    is a what-if (the build's runner is another family)."""
    if not runner or not runner.get("family"):
        return None
    family = runner["family"]
    if runner.get("what_if"):
        return (f"what-if: judged for {runner.get('judged')}, but the build jobs run on {family}: the pins for "
                f"{runner.get('judged')} are in the audit and the report, and this patch pins nothing")
    if catalogue and family in catalogue and not catalogue[family].has_gpu:
        return f"the build jobs run on {family}, which has no GPU: every lecture stays on the CPU, nothing to pin"
    return None


def build(verdicts: list[Verdict], family: str | None = None, runner: dict | None = None,
          catalogue: dict | None = None) -> EmittedConfig:
    from jaxci.audit.writing import pages

    out = EmittedConfig()
    no_pins = pinning_runner(runner, catalogue)
    placed = set() if no_pins else {v.path for v in placed_on_cpu(verdicts)}
    pins = set() if no_pins else set(pin_list(verdicts))
    if no_pins:
        out.notes.append(no_pins)
    for v in verdicts:
        story = narrative(v) if v.path in placed and not v.scan.pinned_cpu else ""
        if story:
            out.narrative.append(f"{v.path} ({story})")
        kernel = KERNEL if v.path in pins else None
        timeout = _needs_timeout(v)
        old = _read(v, out) if (kernel or timeout or v.scan.uses_jax) and v.path_abs is not None else None
        if old is None:
            continue
        out.installs += [f"{v.path}:{n}: `{line}` installs the newest JAX during the build, whatever a workflow or "
                         "the environment file pins (flagged, not changed: remove `jax` there or pin it)"
                         for n, line in pages.jax_installs(old)]
        if not (kernel or timeout):
            continue
        new = (_ipynb_edit if v.path.endswith(".ipynb") else _front_matter_edit)(old, kernel, timeout)
        if new is None:
            out.notes.append(f"{v.path}: no metadata block to edit: set kernelspec.name to {KERNEL} by hand")
            continue
        replaced: list = []
        if kernel and not v.path.endswith(".ipynb") and v.path_abs is not None:
            new, replaced = pages.without_gpu_notes(new, Path(v.path_abs).parent)
        out.pages += [f"{v.path}: the included {t} (a note that the lecture was built with a GPU) replaced by a note "
                      "that it is built on the CPU" for t in replaced]
        if kernel:
            out.pages.append(f"{v.path}: " + ("sampled outputs (draws, summaries) will change on the CPU"
                                               if pages.samples(v.scan) else
                                               "printed numbers may differ in their last digits on the CPU"))
        why = "; ".join(filter(None, [f"pin to CPU ({v.basis}: {v.why})" if kernel else "",
                                      f"per-cell timeout {timeout} s (slowest measured cell x 3)" if timeout else ""]))
        out.changes.append(FileChange(v.path, old, new, why))
    if any(c.new != c.old and "kernelspec" in c.new and KERNEL in c.new for c in out.changes):
        out.changes.insert(0, FileChange(f"{KERNEL_DIR}/kernel.json", None, kernel_json(),
                                         "a kernel that runs JAX on the CPU only"))
    already = [v.path for v in verdicts if v.path in placed and v.scan.pinned_cpu]
    if already:
        out.notes.append("already pin the CPU in their own code (left as they are): " + ", ".join(already))
    if pins_kernel(out):
        out.steps.append(f"- name: {INSTALL_STEP}\n  run: {INSTALL_CMD}")
    machine = f", machine: {family}" if family else ""
    out.steps.append("- name: Standard JAX environment\n"
                     "  uses: jax-ci-bench/jax-ci-bench/.github/actions/jax-env@<commit sha>\n"
                     f"  with: {{concurrency: 1{machine}}}")
    return out


def _read(v: Verdict, out: EmittedConfig) -> str | None:
    """The lecture's text, or None with a note saying why it cannot be edited."""
    if v.path_abs is None:
        out.notes.append(f"{v.path}: not edited: no file to read")
        return None
    try:
        return Path(v.path_abs).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        out.notes.append(f"{v.path}: not edited: cannot read ({type(exc).__name__})")
        return None


def pins_kernel(config: EmittedConfig) -> bool:
    """The patch creates the kernelspec (some lecture is switched to it): the build must install it."""
    return any(c.path == f"{KERNEL_DIR}/kernel.json" for c in config.changes)


def render(config: EmittedConfig, title: str = "jaxci audit --emit-config") -> str:
    lines = [f"{title}: apply from the audited folder with `git apply <this file>`."]
    if pins_kernel(config) or any("execution_timeout" in c.new for c in config.changes):
        lines += ["", "Relies on these execution settings:"] + [f"  - {s}" for s in config.settings]
    lines += ["", "Changes:"] + ([f"  - {c.path}: {c.why}" for c in config.changes] or ["  (none)"])
    if config.narrative:
        lines += ["", "Left on the GPU: narrative (the audit would pin these to CPU for speed, but each shows the GPU "
                  "backend and has little work: pinned, it would print the CPU):"]
        lines += [f"  - {n}" for n in config.narrative]
    for title, items in (("What the pins change on the pages:", config.pages),
                         ("Package pins and why:", config.packages),
                         ("In-notebook installs that undo the JAX pin:", config.installs)):
        if items:
            lines += ["", title] + [f"  - {n}" for n in items]
    if config.notes:
        lines += ["", "Notes:"] + [f"  - {n}" for n in config.notes]
    lines += ["", "Add to the workflow job that builds the book, after installing the environment and before "
              "the build step:", ""] + ["    " + line for step in config.steps for line in step.splitlines()]
    lines.append("")
    # the header is prose git skips, up to the first line that starts a diff: each line is one printable line
    # (util.quoting.line), so no name from the audited repository (a container image, a job id) can start one
    text = "\n".join(quoting.line(x) for x in lines) + "\n"
    for c in config.changes:  # every path checked before any text is returned: a refused one writes nothing
        diff_path(c.path)
    return text + "".join(file_diff(c.path, c.old, c.new) for c in config.changes)
