"""The CI audit's rules: read a lecture repository's workflows, book config and environment file, hold them
against the lecture verdicts, and return a CIReport of findings (jaxci.audit.lecture_ci.report) plus the edits
that fix them. Each rule is one method of `_Audit`, or a function of its own module taking the audit (`book_timeout`,
`version_rules`); the thresholds are stated as constants beside their rule.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import yaml

from jaxci.audit.lecture_ci import edits as ed
from jaxci.audit.lecture_ci import settings, tier, version_rules, workflows
from jaxci.audit.lecture_ci.book_timeout import book_timeout
from jaxci.audit.lecture_ci.engine import engine_of
from jaxci.audit.lecture_ci.lectures import LectureFacts
from jaxci.audit.lecture_ci.report import (
    CACHE,
    FAIL_ONCE,
    JOB_TIMEOUT,
    KINDS,
    MEMORY,
    RUNNER_TIER,
    SPOT,
    CIReport,
    Finding,
)
from jaxci.policy.concurrency import ENGINE_NAMES

# ---- helpers ----

def _catalogue():
    from jaxci.catalogue import CatalogueError, catalogue_defaults, load_catalogue, read_pins

    try:
        catalogue, defaults = load_catalogue(), catalogue_defaults()
    except CatalogueError as exc:
        return {}, {}, {}, str(exc)
    try:
        pins = read_pins("cpu")
    except CatalogueError:
        pins = {}
    return catalogue, defaults, pins, None

#: in a conda build the jax-env action reads JAX through the build's own interpreter: a step in the build's login
#: shell (where setup-miniconda activates the environment) names it first (the action's `python` input)
CONDA_PYTHON_STEP = ("- name: the build's Python (its conda environment) for jax-env\n  shell: bash -l {0}\n"
                     "  run: echo \"JAXCI_PYTHON=$(command -v python)\" >> \"$GITHUB_ENV\"\n")


def job_commands(job: workflows.Job) -> list[tuple[str, str]]:
    """(where, run text) of each run step: where as file:line of its `run:`."""
    out = []
    for line, run in job.commands():
        step = next((s for s in job.steps if s.line == line), None)
        out.append((job.doc.where("jobs", job.id, "steps", step.index, "run") if step else job.where, run))
    return out


def _split_where(engine, job: workflows.Job) -> tuple[str, str]:
    """(file:line, the command as shown) of an engine read from one of the job's commands: the engine keeps both
    (a file name may hold spaces, so its `where` is never split)."""
    return engine.at, engine.shown


def _family(job: workflows.Job) -> str:
    """The runner family the job's label names ('' without a label), without its '+' variants."""
    return (job.label.family or "").split("+")[0] if job.label else ""


# ---- the rules ----

class _Audit:
    def __init__(self, root: Path, lectures: list[LectureFacts], results_dir=None, builds_per_year: int | None = None,
                 whole: dict | None = None):
        self.root = Path(root)
        self.builds_per_year = builds_per_year
        self.lectures = list(lectures)
        self.whole = whole or {}  # family -> jaxci.policy.wholebuild.WholeBuild: the tier rows' build time
        self.report = CIReport(str(self.root), lectures=self.lectures)
        self.catalogue, self.defaults, self.pins, error = _catalogue()
        if error:
            self.report.errors.append(f"catalogue: {error}: runner tier, cost and job timeouts not computed")
        self._loaded = None
        if results_dir is not None:  # the predictions were made from it (commands.audit_ci): say when it is bad
            from jaxci.results.records import ResultsError, load_results

            try:
                self._loaded = load_results(str(results_dir))
            except ResultsError as exc:
                self.report.errors.append(f"--results {results_dir}: {exc}")
        self.results_dir = results_dir
        self._answers: dict = {}  # job key -> (engine, question 3's answer)
        self.label_changes: dict = {}  # job key -> {key: value}
        self.jobs_by_key: dict = {}

    # facts
    @property
    def run(self):
        return [f for f in self.lectures if not f.excluded]

    @property
    def jax(self):
        return [f for f in self.run if f.uses_jax]

    def add(self, finding: Finding) -> None:
        self.report.findings.append(finding)

    def set_label(self, job, **changes) -> None:
        self.jobs_by_key[job.where] = job
        self.label_changes.setdefault(job.where, {}).update(changes)

    def go(self) -> CIReport:
        r = self.report
        r.workflows = workflows.read_workflows(self.root)
        r.book = settings.read_book(self.root)
        r.env = settings.read_env(self.root)
        r.errors += [w.error for w in r.workflows if w.error]
        r.errors += ([r.book.error] if r.book.error else []) + r.env.errors
        self._mark_excluded(r.book)
        if not r.workflows:
            r.notes.append("no .github/workflows/*.yml: nothing to audit in CI")
        jobs = [j for w in r.workflows for j in w.jobs]
        build_jobs = [j for j in jobs if j.builds]
        self._decide(build_jobs)
        for job in build_jobs:  # the tier first: a job that moves to a CPU family is judged there
            self.runner_tier(job)
        for job in jobs:
            self.spot(job)
        for job in build_jobs:  # only jobs that execute notebooks: never a link check or a translation build
            self.job_timeout(job)
            self.memory(job)
            self.cache(job)
            self.fail_once(job)
        book_timeout(self)
        version_rules.versions(self, build_jobs)
        for key, changes in self.label_changes.items():
            made = ed.label_edits(self.jobs_by_key[key], changes)
            r.edits += made
            for f in r.findings:
                if f.job == key and f.by_label and made:
                    f.label_edit, f.label_file = True, self.jobs_by_key[key].file
        for f in r.findings:
            r.edits += [e for e in f.edits if e is not None]
        order = {k: i for i, k in enumerate(KINDS)}
        r.findings.sort(key=lambda f: (order[f.kind], f.where))
        return r

    def _decide(self, build_jobs) -> None:
        """The tier decision with numbers for the first build job on a known runner (executed audits only)."""
        from jaxci.audit.lecture_ci import decision
        from jaxci.catalogue import CatalogueError, load_catalogue

        job = next((j for j in build_jobs if j.label and j.label.kind in ("runs-on", "github")), None)
        if job is None or not self.catalogue:
            return
        family = _family(job) or job.label.image
        try:
            with_lab = load_catalogue(include_lab=True)  # lab machines (TITAN RTX, H200) shown, never chosen
        except CatalogueError:
            with_lab = self.catalogue
        self.report.decision = decision.decide(self.lectures, job.where, family, with_lab, self.defaults,
                                               self.builds_per_year)

    def _mark_excluded(self, book) -> None:
        """Lectures the book's exclude_patterns keep out of execution do not count for tier or timeouts."""
        import fnmatch
        import posixpath

        if not book or not book.exclude:
            return
        base = posixpath.dirname(book.file)
        for i, f in enumerate(self.lectures):
            rel = posixpath.relpath(f.path, base) if base else f.path
            if not f.excluded and any(fnmatch.fnmatch(rel, pattern) for pattern in book.exclude):
                self.lectures[i] = dataclasses.replace(f, excluded=True)

    # spot on a publishing job
    def spot(self, job) -> None:
        lab = job.label
        if not job.publishes or lab is None or not lab.on_spot:
            return
        written = f"spot={lab.spot}" if lab.spot is not None else "no spot= key (RunsOn's default is spot)"
        self.set_label(job, spot="false")
        self.add(Finding(SPOT, f"{job.file}:{job.runs_on_line}", f"job `{job.id}` publishes on spot capacity "
                         f"({written})", "an interrupted spot runner loses the publish mid-way; the job that "
                         "ships the site must run on-demand: " + "; ".join(job.publishes[:3]), "static",
                         "set spot=false in its RunsOn label", job=job.where, edits=[], by_label=True))

    # jobs without timeout-minutes
    def _build_minutes(self, job) -> tuple[float, str, str]:
        """The build's minutes on this job's family: the predicted build (jaxci.policy.builds, through the tier
        decision) when one exists, else the lectures' measured seconds on the machine that ran --execute, else
        the catalogue's planning ceiling."""
        family = self.label_changes.get(job.where, {}).get("family", _family(job))
        whole = tier.whole_build_minutes(self.whole.get(family), family)
        if whole:
            return whole
        predicted = self._predicted_build(job, family)
        if predicted:
            return predicted
        measured = [f for f in self.run if f.measured]
        if self.run and len(measured) == len(self.run):
            on_gpu = tier.is_gpu(job.label, self.catalogue) and not self.moving(job)
            secs = sum((f.gpu_s if on_gpu and f.gpu_s is not None else f.cpu_s) or 0.0 for f in self.run)
            return secs / 60, "measured", (f"{len(measured)} lectures' measured cell seconds ({secs:,.0f} s) on the "
                                           "machine that ran --execute, not on the runner")
        figure = self.defaults.get("suite_minutes_unmeasured")
        value = float(figure.value) if figure else 60.0
        return value, "policy", (f"build time not measured: the catalogue's planning ceiling of {value:g} min "
                                 "(machines.toml [defaults] suite_minutes_unmeasured)")

    def _predicted_build(self, job, family: str):
        """(minutes, label, basis) from the tier decision's predicted build on the job's family, at the high end
        of every band and the slower of the build as written and with the recommended pins; None without one."""
        from jaxci.audit.lecture_ci import decision

        d = self.report.decision
        if d is None or d.job != job.where:
            return None
        mine = [o for o in d.options if o.families == [family]]
        if not mine:
            return None
        worst = max(mine, key=lambda o: o.build_high_s)
        kinds = " / ".join(o.kind for o in mine)
        return worst.build_high_s / 60, decision.PREDICTED, (
            f"predicted build on {family} ({kinds}; the slower, {worst.kind}, at the high end of each lecture's "
            f"band: {worst.build_high_s / 60:.1f} min, mid {worst.build_s / 60:.1f} min): each executed lecture's "
            "measured seconds outside jitted calls plus the runner model's predicted seconds of its JAX work")

    def job_timeout(self, job) -> None:
        """timeout-minutes for a notebook-executing job that sets none, by the one rule (jaxci.policy.timeouts,
        through jaxci.policy.jobcost.job_timeout) on the same predicted (else measured) build. Without a measured or
        predicted build nothing is lowered: the job keeps GitHub's own limit until the build is measured."""
        from jaxci.catalogue import CatalogueError
        from jaxci.policy.timeouts import GITHUB_DEFAULT_JOB_MIN, job_timeout_minutes

        if job.timeout_minutes is not None or job.reusable:
            return
        build, label, basis = self._build_minutes(job)
        try:
            minutes = job_timeout_minutes(build * 60, self.defaults)
            overhead, margin = (float(self.defaults[k].value) for k in ("job_overhead_minutes", "timeout_margin"))
        except (CatalogueError, KeyError):
            return  # said once: "catalogue: ...: runner tier, cost and job timeouts not computed"
        message = f"job `{job.id}` sets no timeout-minutes (GitHub's default: {GITHUB_DEFAULT_JOB_MIN})"
        reason = ("a hung cell or a failed notebook re-executed by every builder burns runner time until GitHub "
                  "stops the job after 6 hours")
        if label == "policy":
            self.add(Finding(JOB_TIMEOUT, job.where, message, reason, label,
                             f"keep GitHub's {GITHUB_DEFAULT_JOB_MIN} minutes until the build is measured (no "
                             "advice lowers a limit without a measurement): `jaxci audit REPOSITORY --execute "
                             "--machine FAMILY --format json`; the planning ceiling alone would give "
                             f"ceil((overhead {overhead:g} + build {build:.1f}) x margin {margin:g}) = {minutes}; "
                             f"{basis}",
                             {"overhead_min": overhead, "build_min": round(build, 2), "margin": margin,
                              "timeout_minutes": GITHUB_DEFAULT_JOB_MIN}, [], job.where))
            return
        edit = ed.job_insert(job, [f"timeout-minutes: {minutes}"])
        self.add(Finding(JOB_TIMEOUT, job.where, message, reason, label,
                         f"timeout-minutes: {minutes} = ceil((overhead {overhead:g} + build {build:.1f}) x "
                         f"margin {margin:g}); {basis}",
                         {"overhead_min": overhead, "build_min": round(build, 2), "margin": margin,
                          "timeout_minutes": minutes}, [edit] if edit else [], job.where))

    def _compared(self, family: str, alt: str) -> str:
        """The two whole builds over the lectures both price (jaxci.policy.wholebuild.compared: a lecture only one
        family prices from a figure, such as one that failed here and was published on the other, is left out of
        both), priced by the job's cost rule."""
        from jaxci.policy import wholebuild
        from jaxci.policy.jobcost import build_job

        there_s, here_s, n = wholebuild.compared(self.whole[alt], self.whole[family])
        dollars = [build_job(self.catalogue[f], s, self.defaults)[1] for f, s in ((family, here_s), (alt, there_s))]
        return (f"; over the {n} lectures both price: build {here_s / 60:.1f} min on {family} vs {there_s / 60:.1f} "
                f"min on {alt} (predicted; the whole build on each: jaxci.policy.wholebuild), ${dollars[0]:.3f} vs "
                f"${dollars[1]:.3f} per build")

    # runner tier
    def runner_tier(self, job) -> None:
        lab = job.label
        if lab is None or lab.kind not in ("runs-on", "github"):
            return
        family = _family(job) or lab.image
        gpu = tier.is_gpu(lab, self.catalogue)
        rows = tier.estimates(self.lectures, self.catalogue, self.defaults, self.whole) if self.catalogue else []
        if not gpu:
            keep = [f.path for f in self.run if f.recommendation == tier.KEEP_GPU]
            reason = (f"CPU runner; {len(keep)} lectures the audit would keep on a GPU" if keep
                      else "CPU runner; no lecture needs a GPU")
            self.report.tiers.append(tier.Tier(job.where, family, False, tier.STAY, reason, "static verdicts",
                                               rows=rows))
            return
        rec, reason, inputs = tier.recommend(self.lectures)
        d = self.report.decision
        if d is not None and d.job == job.where and d.chosen is not None:
            return self._tier_from_decision(job, family, d, inputs, rows)
        alt = tier.cpu_family(family, self.catalogue)
        by = {r.family: r for r in rows}
        label = "static verdicts"
        here, there = by.get(family), by.get(alt) if alt is not None else None
        cost = ""
        if here and there and alt is not None and family in self.whole and alt in self.whole:
            label = "predicted"
            cost = self._compared(family, alt)
        elif here and there and here.build_s and there.build_s:
            label = "predicted" if "predicted" in (here.label, there.label) else "measured"
            cost = (f"; build {here.build_s / 60:.1f} min on {family} vs {there.build_s / 60:.1f} min on {alt} "
                    f"({label})")
            if here.dollars is not None and there.dollars is not None:
                cost += f", ${here.dollars:.3f} vs ${there.dollars:.3f} per build"
        elif here and there and here.price_per_hour and there.price_per_hour:
            cost = (f"; {alt} costs ${there.price_per_hour:g}/h vs ${here.price_per_hour:g}/h for {family} "
                    f"(catalogue prices; build time not measured)")
        t = tier.Tier(job.where, family, True, rec, reason + cost, label, alt, inputs, rows)
        self.report.tiers.append(t)
        if rec == tier.STAY:
            return
        where = f"{job.file}:{job.runs_on_line}"
        moves = rec == tier.MOVE and bool(alt)
        if moves:
            self.set_label(job, family=alt, image=self.catalogue[alt].image)
            fix = f"run the build on {alt} (image {self.catalogue[alt].image})"
        else:
            fix = (f"build on {alt or 'a CPU family'} with JAX_PLATFORMS=cpu, and run the lectures the audit keeps "
                   f"on GPU in a job on {family} (not patched: the split is a design choice)")
        self.add(Finding(RUNNER_TIER, where, f"job `{job.id}` builds on GPU family {family}: {rec}", reason + cost,
                         label, fix, inputs, [], job.where, by_label=moves))

    def _tier_from_decision(self, job, family: str, d, inputs: dict, rows) -> None:
        """The predicted decision sets the tier: move (CPU alone, or a cheaper GPU family), split, or stay."""
        from jaxci.audit.lecture_ci import decision as dc

        c, b = d.chosen, d.before
        money = (lambda o: f"${o.dollars:.3f}" if o.dollars is not None else "no price")
        reason = (f"predicted: {c.name} builds in {c.build_s / 60:.1f} min for {money(c)} per build"
                  + (f" vs {b.build_s / 60:.1f} min for {money(b)} as written ({b.name})" if b else "")
                  + f"; {len(d.gpu_winning)} lecture(s) predicted to win on {family}'s GPU")
        before, after = d.gpu_hours_year
        if before is not None:
            reason += f"; GPU-hours a year at {d.builds_per_year} builds: {before:,.1f} before, {after:,.1f} after"
        target = c.families[0] if c.kind == dc.CPU_ALONE else c.families[-1]
        rec = tier.SPLIT if c.kind == dc.SPLIT else tier.STAY if target == family else \
            tier.MOVE if c.kind == dc.CPU_ALONE else f"move to {target}"
        inputs = {**inputs, "chosen": c.name, "rule": d.rule}
        self.report.tiers.append(tier.Tier(job.where, family, True, rec, reason, dc.PREDICTED,
                                           c.families[0] if c.kind != dc.GPU_PINS else None, inputs, rows))
        if rec == tier.STAY:
            return
        entry = self.catalogue.get(target)
        patchable = rec != tier.SPLIT and entry is not None and entry.runner == "runs-on" \
            and job.label.kind == "runs-on"
        if patchable:
            self.set_label(job, family=target, image=entry.image)
            fix = f"run the build on {target} (image {entry.image})"
        elif rec == tier.SPLIT:
            fix = (f"a job on {c.families[0]} for the other lectures (pinned to CPU) and one on {c.families[-1]} for "
                   f"the {len(c.on_gpu)} that win on its GPU ({', '.join(c.on_gpu[:5])}) (not patched: a second job is "
                   "a design choice)")
        else:
            fix = f"runs-on: {target} (not patched: the label is not a RunsOn label this audit can edit)"
        self.add(Finding(RUNNER_TIER, f"{job.file}:{job.runs_on_line}", f"job `{job.id}` builds on {family}: {rec}",
                         reason, dc.PREDICTED, fix, inputs, [], job.where, by_label=patchable))

    def moving(self, job) -> bool:
        """The tier rule moves this job to a CPU family (its GPU-only findings are then moot)."""
        family = self.label_changes.get(job.where, {}).get("family")
        return family is not None and not (family in self.catalogue and self.catalogue[family].has_gpu)

    # memory policy for parallel execution on a GPU
    def memory(self, job) -> None:
        if not tier.is_gpu(job.label, self.catalogue):
            return
        engine, answer = self.question3(job)
        n = engine.now if engine else None
        if not n or n < 2 or self.moving(job):
            return
        where, command = _split_where(engine, job)
        if any(k in job.env for k in workflows.MEMORY_VARS) or job.uses_action("jax-env"):
            return
        family = _family(job)
        device = self.catalogue[family].value("gpu_memory_mib") if family in self.catalogue else None
        env, policy, why = self._advice(n, device)
        lines = [f"{k}: {ed.yaml_quote(v)}" for k, v in env.items()]
        edit = None if job.container else ed.insert_into_mapping(job.doc, ("jobs", job.id, "env"), lines) \
            if isinstance(job.doc.node("jobs", job.id, "env"), yaml.MappingNode) else \
            ed.job_insert(job, ["env:"] + ["  " + x for x in lines])   # a container job: its own environment
        at_once = (f"; and {answer.beyond}: {answer.setting} (jax-env `concurrency: {answer.concurrency}`)"
                   if answer.beyond else "")
        self.add(Finding(MEMORY, where, f"job `{job.id}` runs {n} notebook kernels at once on GPU family {family} "
                         f"with no XLA memory variable ({command})",
                         "under JAX's default each kernel tries to preallocate 75% of the GPU: a later kernel is "
                         "left short and dies without a traceback (incident 3)",
                         "policy", f"`jaxci env --kernels {answer.concurrency} --machine {family}`: {policy} ({why})"
                         f"{at_once}", {"kernels": n, "advised": answer.concurrency, "engine": engine.name,
                                        "device_mib": device, "env": env}, [edit] if edit else [], job.where))

    def question3(self, job):
        """(the job's engine, question 3's answer for it): jaxci.policy.concurrency.decide, the one rule; once per
        job (its tier decision, which `moving` reads, is made before any rule asks)."""
        if job.where not in self._answers:
            from jaxci.policy import concurrency

            family = _family(job)
            vcpu = self.catalogue[family].value("vcpu") if family in self.catalogue else None
            vcpu = vcpu if isinstance(vcpu, int) else None
            engine = engine_of(job_commands(job), self.root, vcpu, every=len(self.run) or None)
            has_gpu = tier.is_gpu(job.label, self.catalogue) and not self.moving(job)
            answer = concurrency.decide(self.survived, engine or concurrency.Engine(concurrency.NBCLIENT),
                                        has_gpu=has_gpu, family=family or "the family", vcpu=vcpu)
            self._answers[job.where] = (engine, answer)
        return self._answers[job.where]

    @functools.cached_property
    def survived(self) -> list:
        """What GPUs measured keeping every worker alive, in the results the predictions come from (read once)."""
        from jaxci.analysis.concurrency import grid, survived_on_gpu

        if self._loaded is not None:
            return survived_on_gpu(grid(self._loaded.records))
        from jaxci import REPO_ROOT
        from jaxci.workflows.envadvice import gpu_survival

        return gpu_survival(str(self.results_dir or REPO_ROOT / "results"))[0]

    def _advice(self, n: int, device) -> tuple[dict, str, str]:
        from jaxci.catalogue import CatalogueError, load_policies
        from jaxci.workflows.envadvice import AdviceError, recommend

        try:
            policies, budget = load_policies()
            advice = recommend(n, device_mib=device or 15360, budget=budget, policies=policies,
                               cache_dir="~/.cache/jax")
            env = {k: v for k, v in advice.env.items() if k in workflows.MEMORY_VARS}
            return env, advice.policy, advice.reason
        except (CatalogueError, AdviceError) as exc:
            return {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}, "no-prealloc", f"fallback: {exc}"

    # compilation cache / jax-env action
    def cache(self, job) -> None:
        if not self.jax or "JAX_COMPILATION_CACHE_DIR" in job.env or job.uses_action("jax-env"):
            return
        gpu = tier.is_gpu(job.label, self.catalogue) and not self.moving(job)
        comp = [(f.compile_gpu_s if gpu and f.compile_gpu_s is not None else f.compile_cpu_s) for f in self.jax]
        if comp and all(c is not None for c in comp):
            saving, label = f"up to {sum(comp):,.1f} s per build: the measured compile seconds of the " \
                            f"{len(comp)} JAX lectures (a warm cache still loads its entries)", "measured"
        else:
            saving, label = "not measured (run `jaxci audit --execute` for compile seconds per lecture)", "not measured"
        family = _family(job) if job.label and job.label.kind == "runs-on" else None
        _, answer = self.question3(job)
        n = answer.concurrency if gpu else 1
        if self.moving(job):
            family = self.label_changes[job.where]["family"]
        use = (CONDA_PYTHON_STEP if job.conda else "") + (
            "- uses: jax-ci-bench/jax-ci-bench/.github/actions/jax-env@<full commit sha>\n  with: {"
            + ", ".join(x for x in (f"concurrency: {n or 1}", f"machine: {family}" if family else "",
                                    "pin-cpu: true" if not gpu else "",
                                    'python: "${{ env.JAXCI_PYTHON }}"' if job.conda else "") if x) + "}")
        self.add(Finding(CACHE, job.where, f"job `{job.id}` builds {len(self.jax)} JAX lectures with no persistent "
                         "compilation cache", f"every build recompiles every jitted function; saving {saving}",
                         label, "add the jax-env step after JAX is installed (restores and saves the cache, "
                         "sets the memory policy):\n" + use, {"jax_lectures": len(self.jax)}, [], job.where))

    # fail once
    def fail_once(self, job) -> None:
        """A build job with no fail-once step runs a known failure again on every build, until its timeout: the
        engine's template (jaxci.policy.timeouts.FAIL_ONCE) wires it."""
        from jaxci.policy import timeouts

        if any("jaxci failures" in run for _, run in job.commands()):
            return
        engine, _ = self.question3(job)
        if engine is None:
            return
        template = timeouts.FAIL_ONCE.get(engine.name)
        fix = (f"copy `{template}` from jax-ci-bench: {timeouts.engine_hygiene(engine.name)}" if template else
               timeouts.engine_hygiene(engine.name))
        self.add(Finding(FAIL_ONCE, _split_where(engine, job)[0], f"job `{job.id}` builds with "
                         f"{ENGINE_NAMES[engine.name]} and records no failures",
                         "a failing notebook is executed again on every build until it fails (neither engine "
                         "caches a failure): its minutes, every build, up to the cell or job timeout", "policy", fix,
                         {"engine": engine.name}, [], job.where))

def audit_ci(root, lectures: list[LectureFacts], *, results_dir=None, builds_per_year: int | None = None,
             whole: dict | None = None) -> CIReport:
    """Findings for the repository at `root`, given its lectures' facts (see jaxci.audit.lecture_ci.lectures).
    Build time per family: `whole` (family -> jaxci.policy.wholebuild.WholeBuild: the audit's whole build, the one
    figure audit.json's `build` block gives), else executed lectures with the runner model's predictions
    (`predicted`, from --results: jaxci.policy.builds adds them up)."""
    return _Audit(Path(root), lectures, results_dir, builds_per_year, whole).go()
