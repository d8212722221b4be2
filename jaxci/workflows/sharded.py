"""A sharded book build (templates/build-sharded-*.yml, issue 79): shard jobs each execute their share of the pages
into their own execution cache, and one last job merges the caches and builds the site once, executing nothing.

The share is the plan's (`jaxci runner-decision --shard-plan`: the decision's jobs, planned by each lecture's
predicted seconds on its family); a shard executes its pages by telling the engine not to execute the others, the
way fail once skips a known failure (Jupyter Book 1.x: `execute.exclude_patterns`; mystmd: `execute: {skip: true}`
in a page's front matter). The merge uses each engine's own cache: jupyter-cache's API for Jupyter Book 1.x, the
content-addressed files of mystmd's `_build/execute`."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from jaxci.util import quoting
from jaxci.util.bounds import JOB_S

FORMAT, VERSION = "jaxci-shard-plan", 1
ENGINES = ("jupyter-book", "mystmd")
#: where each engine keeps its execution cache, relative to the book's folder
CACHE = {"jupyter-book": Path("_build") / ".jupyter_cache", "mystmd": Path("_build") / "execute"}
REMEDY = "jaxci runner-decision --shard-plan DIR writes it"


class ShardError(ValueError):
    """A plan, a shard or a cache that cannot be used: one line, naming the file."""


@dataclass(frozen=True)
class Shard:
    name: str                      # the matrix's shard name: "gpu", "cpu-1", ...
    runs_on: str                   # the runner family the job runs on
    device: str                    # "gpu" | "cpu": where its lectures run
    pages: tuple[str, ...]         # relative to the repository root
    predicted_s: tuple[float, float, float]   # mid, low, high: the plan's execution seconds, set-up not included
    unpriced: tuple[str, ...] = ()  # its pages the decision could not price (not in predicted_s): run where they ran


@dataclass(frozen=True)
class ShardPlan:
    repository: str
    option: str                    # the decision's option the plan carries out
    shards: tuple[Shard, ...]

    def shard(self, name: str) -> Shard:
        for s in self.shards:
            if s.name == name:
                return s
        raise ShardError(f"no shard {quoting.line(name, 80)} in the plan (it has {', '.join(self.names)})")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.shards)

    def to_doc(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "repository": self.repository, "option": self.option,
                "shards": [{"name": s.name, "runs_on": s.runs_on, "device": s.device, "pages": list(s.pages),
                            "predicted_s": list(s.predicted_s), "unpriced": list(s.unpriced)}
                           for s in self.shards]}


def _text(doc: dict, key: str, where: str) -> str:
    value = doc.get(key)
    if not isinstance(value, str) or not value or value != quoting.line(value, 200):
        raise ShardError(f"{where}: `{key}` is not a one-line name")
    return value


def _shard(doc, where: str) -> Shard:
    if not isinstance(doc, dict):
        raise ShardError(f"{where}: not a mapping")
    pages = doc.get("pages")
    if not isinstance(pages, list) or not pages or not all(isinstance(p, str) and p.endswith((".md", ".ipynb"))
                                                            and ".." not in Path(p).parts for p in pages):
        raise ShardError(f"{where}: `pages` is not a list of .md or .ipynb pages inside the repository")
    seconds = doc.get("predicted_s")
    if not (isinstance(seconds, list) and len(seconds) == 3
            and all(type(x) in (int, float) and 0 <= x < JOB_S for x in seconds)):
        raise ShardError(f"{where}: `predicted_s` is not [mid, low, high] seconds")
    device = _text(doc, "device", where)
    if device not in ("gpu", "cpu"):
        raise ShardError(f"{where}: `device` is {quoting.line(device, 20)}, not gpu or cpu")
    unpriced = doc.get("unpriced", [])
    if not isinstance(unpriced, list) or not set(unpriced) <= set(pages):
        raise ShardError(f"{where}: `unpriced` is not a list of the shard's own pages")
    return Shard(_text(doc, "name", where), _text(doc, "runs_on", where), device, tuple(pages),
                 (float(seconds[0]), float(seconds[1]), float(seconds[2])), tuple(unpriced))


def load_plan(path) -> ShardPlan:
    """The plan at `path`, every field checked; a page in two shards is refused (it would execute twice)."""
    from jaxci.util import versioned

    doc = versioned.load(path, FORMAT, VERSION, 1 << 20, ShardError, REMEDY, kind="shard plan")
    shards = doc.get("shards")
    if not isinstance(shards, list) or not shards:
        raise ShardError(f"{path}: `shards` is not a non-empty list")
    plan = ShardPlan(_text(doc, "repository", str(path)), _text(doc, "option", str(path)),
                     tuple(_shard(s, f"{path}: shard {i + 1}") for i, s in enumerate(shards)))
    if len(set(plan.names)) != len(plan.names):
        raise ShardError(f"{path}: two shards have one name")
    pages = [p for s in plan.shards for p in s.pages]
    twice = sorted({p for p in pages if pages.count(p) > 1})
    if twice:
        raise ShardError(f"{path}: {quoting.line(twice[0], 120)} is in two shards (it would execute twice)")
    return plan


def others(plan: ShardPlan, name: str, book: str) -> list[str]:
    """The pages of every other shard, relative to the book's folder `book` (relative to the repository root):
    those this shard does not execute."""
    mine = plan.shard(name)
    root = Path(book)
    return [Path(p).relative_to(root).as_posix() if Path(p).is_relative_to(root) else p
            for s in plan.shards if s is not mine for p in s.pages]


def keep_to_share(plan: ShardPlan, name: str, book, engine: str, repo_root=".") -> list[str]:
    """Tell `engine` not to execute the other shards' pages, in this checkout (the book at `book`): the
    names passed over. Jupyter Book: the book's `_config.yml`; mystmd: each page's front matter."""
    from jaxci.workflows import failures

    plan.shard(name)  # an unknown shard first: it is the likelier mistake
    root = Path(repo_root).resolve()
    if not Path(book).resolve().is_relative_to(root):
        raise ShardError(f"--book {quoting.line(book, 120)} is not inside the repository's checkout ({root})")
    book_rel = Path(book).resolve().relative_to(root).as_posix()
    names = others(plan, name, book_rel)
    try:
        if engine == "jupyter-book":
            failures.exclude_in_config(Path(book) / "_config.yml", names)
        else:
            edits, notes = failures.plan_pages(book, names)   # every page planned before any is written
            if notes:
                raise ShardError("; ".join(notes))
            failures.write_all(edits)
    except failures.FailuresError as exc:
        raise ShardError(str(exc)) from None
    return names


def merge(engine: str, sources: list[Path], book) -> int:
    """Each shard's execution cache (`sources`: the folders its job uploaded) merged into the book's own; the
    number of executed notebooks merged. Every source is checked before any is merged: one that is not such a
    cache is refused by name and nothing is merged (the build then executes what it lacks, as a whole build)."""
    for src in sources:
        _check_cache(engine, src)
    dest = Path(book) / CACHE[engine]
    return sum((_merge_jupyter_cache if engine == "jupyter-book" else _merge_mystmd)(src, dest) for src in sources)


def _check_cache(engine: str, src: Path) -> None:
    from jaxci.workflows import failures

    if engine == "mystmd":
        if not (src.is_dir() and any(src.glob("*.json"))):
            raise ShardError(f"{src}: not a mystmd execution cache (no _build/execute/*.json)")
        return
    try:
        failures.check_database(src)
    except failures.FailuresError as exc:
        raise ShardError(str(exc)) from None


def _merge_mystmd(src: Path, dest: Path) -> int:
    """mystmd's cache is one JSON file per executed notebook, named by the hash of its code: a union of files."""
    files = sorted(src.glob("*.json"))
    dest.mkdir(parents=True, exist_ok=True)
    for f in files:
        shutil.copyfile(f, dest / f.name)
    return len(files)


def _merge_jupyter_cache(src: Path, dest: Path) -> int:
    """Every cached notebook of `src` put into `dest` through jupyter-cache (its outputs, data and artifacts, keyed
    by the hash of its code, as the book's own build looks it up)."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    source, target = get_cache(str(src)), get_cache(str(dest))
    records = source.list_cache_records()
    for rec in records:
        out = source.get_cache_bundle(rec.pk)
        bundle = CacheBundleIn(out.nb, rec.uri, artifacts=out.artifacts, data=dict(rec.data or {}))
        target.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
    return len(records)


def plan_of(decision) -> ShardPlan | None:
    """The shard plan of a runner decision (jaxci.policy.runner_decision) whose chosen option splits or shards the
    build: one shard per job, named by its device (`gpu`, then `cpu-1`, `cpu-2`, ...); None for stay or move, which
    need no plan. The lectures the decision could not price (its `left_out`) run where they run today: in the
    least loaded shard on today's family, else the first; each shard names them apart."""
    from jaxci.policy import runner_decision as rd

    option = decision.chosen
    if option.kind not in (rd.SPLIT, rd.SHARD):
        return None
    today = [j for j in option.jobs if j.family == decision.today] or list(option.jobs[:1])
    home = min(today, key=lambda j: j.seconds[0])
    shards, n_cpu = [], 0
    for job in option.jobs:
        n_cpu += job.device == "cpu"
        extra = tuple(sorted(decision.left_out)) if job is home else ()
        shards.append(Shard("gpu" if job.device == "gpu" else f"cpu-{n_cpu}", job.family, job.device,
                            tuple(sorted(job.lectures + extra)), job.seconds, extra))
    return ShardPlan(decision.repository, option.name, tuple(shards))
