"""A repository's GitHub workflows as plain records: triggers, jobs, runner labels, timeouts, env, steps.

RunsOn labels (`runs-on=<run id>/family=g4dn.2xlarge/image=ubuntu24-gpu-x64/spot=false`, as one string
or as a list of `key=value` items) are split into family, image, spot and the other keys. RunsOn takes
spot capacity unless the label says `spot=false`, so an absent `spot` key reads as spot. Labels starting
`ubuntu-`, `windows-` or `macos-` are GitHub-hosted. A label made of an expression alone is "expression":
its runner is not knowable from the file.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from jaxci.audit.reading.yamlread import Doc, load
from jaxci.util import quoting
from jaxci.util.quoting import code

GITHUB_PREFIXES = ("ubuntu-", "windows-", "macos-")
#: variables that change what JAX/XLA does in a job
JAX_ENV = re.compile(r"^(JAX_|XLA_|TF_CPP_|CUDA_VISIBLE_DEVICES$|NVIDIA_)")
MEMORY_VARS = ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_CLIENT_MEM_FRACTION",
               "XLA_PYTHON_CLIENT_ALLOCATOR")
#: commands that execute lectures as part of a book build
BUILD_COMMANDS = (re.compile(r"\b(jb|jupyter-book)\s+build\b|\bmyst\s+build\b|\bsphinx-build\b|\bjcache\b"
                             r"|--nbmake\b|\bpapermill\b"), (re.compile(r"\bnbconvert\b"), re.compile(r"--execute")))
#: build commands that do not execute notebooks: link checks and translation builds (a job timeout sized from
#: notebook execution would mean nothing there)
NON_EXECUTING = re.compile(r"\blinkcheck\b|\blink-check\b|\blychee\b|(?:-b|--builder)[ =]?gettext\b"
                           r"|\bsphinx-intl\b|\btranslat", re.I)
#: actions and commands that publish (a site, a branch, a release)
PUBLISH_ACTIONS = ("actions/deploy-pages", "actions/upload-pages-artifact", "peaceiris/actions-gh-pages",
                   "jamesives/github-pages-deploy-action", "softprops/action-gh-release",
                   "ncipollo/release-action")
PUBLISH_COMMANDS = (re.compile(r"\bgit\s+push\b|\bgh\s+release\s+(create|upload)\b|\btwine\s+upload\b"
                               r"|\baws\s+s3\s+sync\b"),
                    (re.compile(r"\bghp-import\b"), re.compile(r"-p\b|--push")),
                    (re.compile(r"\bnetlify\s+deploy\b"), re.compile(r"--prod")))


def commands_in(patterns, run: str) -> list[str]:
    """What `patterns` find in run: text, line by line, in linear time: a pattern is one regular expression
    without a line-long wildcard, or a pair (first, then) found as `first` and then `then` after its first hit
    on the same line (what `first[^\n]*then` says, without retrying `first` at every later start: a pull
    request's line repeating `first` cannot make the search quadratic)."""
    out = []
    for line in run.splitlines():
        for pattern in patterns:
            if isinstance(pattern, tuple):
                first = pattern[0].search(line)
                then = first and pattern[1].search(line, first.end())
                if then:
                    out.append(line[first.start():then.end()].strip())
            else:
                out += [m.group(0).strip() for m in pattern.finditer(line)]
    return out


@dataclass
class Label:
    raw: str
    kind: str                      # runs-on | github | self-hosted | expression | other
    family: str | None = None
    image: str | None = None
    spot: str | None = None        # the spot value written, None when absent
    other: dict = field(default_factory=dict)

    @property
    def on_spot(self) -> bool:
        """RunsOn's default is spot: only spot=false (or on-demand aliases) is on-demand."""
        return self.kind == "runs-on" and (self.spot is None or self.spot.lower() not in ("false", "0", "no"))


def parse_label(value) -> Label:
    """Read a `runs-on` value: a string, a list of labels, or {group, labels}."""
    if isinstance(value, dict):
        value = value.get("labels", value.get("group", ""))
    items = [str(v) for v in value] if isinstance(value, list) else [str(value or "")]
    raw = items[0] if len(items) == 1 else "[" + ", ".join(items) + "]"
    parts = [p for item in items for p in (item.split("/") if "runs-on=" in item or "family=" in item else [item])]
    keys = {}
    for part in parts:
        if "=" in part:
            k, _, v = part.partition("=")
            keys[k.strip()] = v.strip()
    if "runs-on" in keys or "family" in keys:
        other = {k: v for k, v in keys.items() if k not in ("runs-on", "family", "image", "spot")}
        return Label(raw, "runs-on", keys.get("family"), keys.get("image"), keys.get("spot"), other)
    first = items[0].strip()
    if first.startswith(GITHUB_PREFIXES):
        return Label(raw, "github", image=first)
    if "self-hosted" in items:
        return Label(raw, "self-hosted")
    if first.startswith("${{"):
        return Label(raw, "expression")
    return Label(raw, "other")


@dataclass
class WorkflowStep:
    index: int
    line: int
    name: str
    uses: str | None
    run: str | None
    env: dict


@dataclass
class Job:
    file: str
    id: str
    line: int
    doc: Doc = field(repr=False)
    label: Label | None = None
    runs_on_line: int | None = None
    timeout_minutes: object = None
    timeout_line: int | None = None
    reusable: bool = False                       # `uses:` a reusable workflow (no runs-on / timeout-minutes)
    env: dict = field(default_factory=dict)      # JAX/XLA vars: name -> (value, "file:line"), workflow + job + steps
    steps: list = field(default_factory=list)
    publishes: list = field(default_factory=list)  # evidence strings "file:line what"
    builds: list = field(default_factory=list)     # evidence of a lecture build "file:line command"
    checks: list = field(default_factory=list)     # book builds that execute nothing (link check, translation)
    environment: str | None = None
    container: str = ""    # the job's `container:` image ('' without one): its environment is that image's

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def commands(self) -> list[tuple[int, str]]:
        return [(s.line, s.run) for s in self.steps if s.run]

    def uses_action(self, fragment: str) -> WorkflowStep | None:
        return next((s for s in self.steps if s.uses and fragment in s.uses.lower()), None)

    @property
    def conda(self) -> bool:
        """The job builds in a conda environment (setup-miniconda): its Python is that environment's, active only
        in its steps' login shells, never the runner's `python3` a composite action's bash finds."""
        return self.uses_action("setup-miniconda") is not None


@dataclass
class Workflow:
    file: str
    doc: Doc = field(repr=False)
    name: str = ""
    triggers: list = field(default_factory=list)
    jobs: list = field(default_factory=list)
    error: str | None = None


def _minutes(doc: Doc, path, value):
    """timeout-minutes as written: a finite number stays one; anything else (`.nan`, `.inf`, an expression,
    text) is kept as the text of the file, so every output that carries it (JSON included) holds what was
    written and never a non-finite number."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return value
    node = doc.node(*path)
    return str(node.value) if node is not None and hasattr(node, "value") and isinstance(node.value, str) \
        else str(value)


def _env_vars(doc: Doc, mapping, path, out: dict) -> None:
    if not isinstance(mapping, dict):
        return
    for key, value in mapping.items():
        if JAX_ENV.match(str(key)):
            out[str(key)] = (str(value), doc.where(*path, key))


def _inline_env(doc: Doc, step_path, run: str, out: dict) -> None:
    """`VAR=value command`, `export VAR=value` and `echo "VAR=value" >> $GITHUB_ENV` inside run: text."""
    for m in re.finditer(r"(?<![\w$])((?:JAX|XLA)_[A-Z0-9_]+)=(\"[^\"]*\"|'[^']*'|[^\s;&|]*)", run):
        out.setdefault(m.group(1), (m.group(2).strip("'\""), doc.where(*step_path, "run")))


def container_image(value) -> str:
    """A job's `container:` as its image name ('' for none): a string, or a mapping's `image`, as one printable
    line (util.quoting.line: a newline in the name is shown as `\\n`, never carried into a note or a patch)."""
    image = value.get("image") if isinstance(value, dict) else value
    text = str(image).strip() if isinstance(image, (str, int, float)) else ""
    return quoting.line(text, 200) if text else ""


def builds_in(where: str, run: str) -> list[str]:
    """Evidence of notebook execution in one run: text, line by line: a build command on a line that is not a
    link check or a translation build (`jb build --builder linkcheck` executes nothing)."""
    out = []
    for line in run.splitlines():
        if NON_EXECUTING.search(line):
            continue
        out += [f"{where} runs {code(c)}" for c in commands_in(BUILD_COMMANDS, line)]
    return out


def read_workflow(path: Path, rel: str) -> Workflow:
    doc = load(path, rel)
    wf = Workflow(rel, doc)
    if doc.error:
        wf.error = doc.error
        return wf
    data = doc.data
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), dict):
        wf.error = f"{rel}: not a workflow (no 'jobs' mapping)"
        return wf
    wf.name = str(data.get("name", rel))
    on = data.get("on", data.get(True))
    wf.triggers = [on] if isinstance(on, str) else list(on) if isinstance(on, (list, dict)) else []
    top_env: dict = {}
    _env_vars(doc, data.get("env"), ("env",), top_env)
    for job_id, body in data["jobs"].items():
        if not isinstance(body, dict):
            continue
        job = Job(rel, str(job_id), doc.line("jobs", job_id) or 0, doc)
        job.env = dict(top_env)
        _env_vars(doc, body.get("env"), ("jobs", job_id, "env"), job.env)
        job.reusable = "uses" in body
        if "runs-on" in body:
            job.label = parse_label(body["runs-on"])
            job.runs_on_line = doc.line("jobs", job_id, "runs-on")
        if "timeout-minutes" in body:
            job.timeout_minutes = _minutes(doc, ("jobs", job_id, "timeout-minutes"), body["timeout-minutes"])
            job.timeout_line = doc.line("jobs", job_id, "timeout-minutes")
        job.container = container_image(body.get("container"))
        env_name = body.get("environment")
        job.environment = str(env_name.get("name") if isinstance(env_name, dict) else env_name) if env_name else None
        steps = body.get("steps") or []
        if not isinstance(steps, list):
            wf.error = f"{doc.where('jobs', job_id, 'steps')}: steps is {type(steps).__name__} {str(steps)[:40]!r}, " \
                "not a list of steps"
            return wf
        for i, step in enumerate(steps):
            if not isinstance(step, dict):
                continue
            spath = ("jobs", job_id, "steps", i)
            s = WorkflowStep(i, doc.line(*spath) or 0, str(step.get("name", "")), step.get("uses"), step.get("run"),
                             env if isinstance(env := step.get("env"), dict) else {})
            job.steps.append(s)
            _env_vars(doc, s.env, spath + ("env",), job.env)
            if isinstance(s.run, str):
                _inline_env(doc, spath, s.run, job.env)
                for c in commands_in(PUBLISH_COMMANDS, s.run):
                    job.publishes.append(f"{doc.where(*spath, 'run')} runs {code(c)}")
                job.builds += builds_in(doc.where(*spath, "run"), s.run)
            if isinstance(s.uses, str) and s.uses.lower().split("@")[0] in PUBLISH_ACTIONS:
                job.publishes.append(f"{doc.where(*spath, 'uses')} uses {s.uses.split('@')[0]}")
        if NON_EXECUTING.search(f"{job_id} {body.get('name', '')}"):
            job.checks, job.builds = job.checks + job.builds, []  # a link-check or translation job
        if job.environment and job.environment.lower() in ("github-pages", "production") and not job.publishes:
            job.publishes.append(f"{doc.where('jobs', job_id, 'environment')} deploys to environment "
                                 f"{job.environment}")
        wf.jobs.append(job)
    return wf


def read_workflows(root: Path) -> list[Workflow]:
    folder = Path(root) / ".github" / "workflows"
    if not folder.is_dir():
        return []
    files = sorted(p for p in folder.iterdir() if p.suffix in (".yml", ".yaml") and p.is_file())
    return [read_workflow(p, p.relative_to(root).as_posix()) for p in files]
