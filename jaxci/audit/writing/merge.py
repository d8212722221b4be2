"""The shards of a sharded executed audit combined into the one audit (`jaxci audit merge A.json B.json ...`).

Every shard's JSON lists every lecture (the ones it did not run with their static verdict) and, under `shard`,
the spec, the lectures it owns and a digest of the audited files. The merge takes each lecture's record from the
shard that owns it, the pin list and failures from each shard's own lectures, and drops `shard`: the result is
what one unsharded run writes, apart from the timings (`strip_timings` says which fields those are). Shards
that overlap, leave a lecture or a shard out, disagree on N, or come from different files are refused, in one
line, before anything is written.
"""

from __future__ import annotations

from typing import TypeGuard

from jaxci.accel import accelerator_run
from jaxci.audit.reading.runrecord import MAX_SHARDS, is_line
from jaxci.audit.writing.emit import PIN_HEADING
from jaxci.util import quoting
from jaxci.util.validate import one_line, quoted

#: what differs between two runs of the same lecture apart from what it computes: measured seconds (every
#: field named *_s, and eager work's `s`), the processes it ran as, the memory it happened to hold, and the
#: host probe's ratio and whether the calibration applied on it (measured by each process)
_VOLATILE = {"s", "kernel_pid", "leftover_pids", "memory", "peak_memory", "host_factor", "calibration", "host_probe",
             "build", "runner_decision"}


class MergeError(ValueError):
    """The shards cannot be merged: the message is one line (values from the files quoted, control characters
    escaped)."""


def strip_timings(doc):
    """The document with every timing field removed (keys ending in `_s`, the kernel's pids, memory readings,
    and the predictions made from measured seconds): two audits of the same lectures compare equal on the rest."""
    if isinstance(doc, dict):
        return {k: strip_timings(v) for k, v in doc.items()
                if not (k.endswith("_s") or k in _VOLATILE or k == "predicted")}
    if isinstance(doc, list):
        return [strip_timings(v) for v in doc]
    return doc


def _shard(doc, where: str) -> dict:
    """A shard's block, every field the merge reads checked: its lectures (one-line names), N, its index, spec
    and source; and the document's own lists the merge takes from it."""
    block = doc.get("shard") if isinstance(doc, dict) else None
    if not isinstance(block, dict) or not isinstance(block.get("lectures"), list):
        raise MergeError(f"{where}: not a shard of an audit (`jaxci audit --execute --shard i/N --format json`)")
    count, index = block.get("count"), block.get("index")
    if not _whole(count) or not 1 <= count <= MAX_SHARDS:
        raise MergeError(f"{where}: shard.count {one_line(quoted(count, 40))}: expected a whole number in "
                         f"1..{MAX_SHARDS}")
    if not _whole(index) or not 1 <= index <= count:
        raise MergeError(f"{where}: shard.index {one_line(quoted(index, 40))}: expected a whole number in 1..{count}")
    for key in ("spec", "source"):
        if block.get(key) is not None and not is_line(block[key]):
            raise MergeError(f"{where}: shard.{key}: expected one line of text")
    for key, items in (("shard.lectures", block["lectures"]), ("pin_to_cpu", doc.get("pin_to_cpu", [])),
                       ("failed", doc.get("failed", []))):
        if not isinstance(items, list) or not all(is_line(x) for x in items):
            raise MergeError(f"{where}: {key}: expected a list of lecture paths (one line of text each)")
    execution = doc.get("execution", {})
    if not isinstance(execution, dict) or not isinstance(execution.get("keys", {}), dict) \
            or not all(isinstance(k, dict) for k in execution.get("keys", {}).values()) \
            or not isinstance(execution.get("reused", []), list) \
            or not all(is_line(r) for r in execution.get("reused", [])):
        raise MergeError(f"{where}: execution: expected {{keys: {{path: {{platform: key}}}}, reused: [text]}}")
    return block


def _whole(value) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def check(docs: list[dict], names: list[str]) -> list[dict]:
    """The shard blocks, in shard order, once every refusal rule passed."""
    if not docs:
        raise MergeError("no shard files given")
    blocks = [_shard(d, n) for d, n in zip(docs, names)]
    counts = sorted({b.get("count") for b in blocks}, key=str)
    if len(counts) > 1:
        specs = ", ".join(f"{one_line(n)} is {b.get('spec')}" for n, b in zip(names, blocks))
        raise MergeError(f"shards of different N: {specs}")
    count: int = blocks[0]["count"]  # every block's (one N), a whole number checked by _shard
    sources = {b.get("source") for b in blocks}
    paths = {tuple(lec.get("path") for lec in d.get("lectures", [])) for d in docs}
    if len(sources) > 1 or len(paths) > 1:
        raise MergeError("shards of different repositories or commits: their lecture files differ "
                         f"(digests {', '.join(sorted(map(str, sources)))})")
    seen: dict = {}
    for name, block in zip(names, blocks):
        if block.get("index") in seen:
            raise MergeError(f"shard {block.get('spec')} given twice ({one_line(seen[block.get('index')])} and "
                             f"{one_line(name)})")
        seen[block.get("index")] = name
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
    if missing:
        raise MergeError(f"missing shard(s) {', '.join(missing)} of {count}")
    owner: dict = {}
    for name, block in zip(names, blocks):
        for path in block["lectures"]:
            if path in owner:
                raise MergeError(f"shards overlap: {quoted(path, 80)} is in {one_line(owner[path])} and "
                                 f"{one_line(name)}")
            owner[path] = name
    unowned = [p for p in next(iter(paths)) if p not in owner]
    if unowned:
        raise MergeError(f"no shard owns {quoted(unowned[0], 80)}"
                         + (f" and {len(unowned) - 1} more" if len(unowned) > 1 else ""))
    return blocks


#: what each shard says of itself alone: its block, the probe it measured (each run keeps its own), and its whole
#: build and runner decision over its own lectures (the report and `jaxci audit --published` compute the merged
#: ones from the records)
PER_SHARD = ("shard", "host_probe", "build", "runner_decision")


def merge(docs: list[dict], names: list[str] | None = None) -> dict:
    """The one audit from its shards' documents (MergeError when they do not make one)."""
    names = names or [f"shard file {i + 1}" for i in range(len(docs))]
    blocks = check(docs, names)
    order = sorted(range(len(docs)), key=lambda i: blocks[i]["index"])
    docs = [docs[i] for i in order]
    blocks = [blocks[i] for i in order]
    owned = [set(b["lectures"]) for b in blocks]
    record = {lec["path"]: lec for d, mine in zip(docs, owned) for lec in d["lectures"] if lec["path"] in mine}
    position = {lec["path"]: i for i, lec in enumerate(docs[0]["lectures"])}
    out = {}
    for key, value in docs[0].items():
        if key in PER_SHARD:
            continue
        if key == "lectures":
            value = [record[lec["path"]] for lec in value]
        elif key in ("pin_to_cpu", "failed"):
            value = [p for d, mine in zip(docs, owned) for p in d.get(key, []) if p in mine and p in position]
            value.sort(key=position.__getitem__)  # the lectures' order (a dict: no search per item)
        elif key == "per_family":
            value = _per_family([record[lec["path"]] for lec in docs[0]["lectures"]])
        elif key == "execution":
            value = _execution([d.get("execution") or {} for d in docs], owned)
        else:
            different = [n for d, n in zip(docs, names) if d.get(key) != value]
            if different:
                raise MergeError(f"shards differ in {quoted(key, 40)} (run them with the same options): "
                                 f"{one_line(different[0])}")
        out[key] = value
    return out


def _per_family(lectures: list[dict]) -> dict:
    """The build totals per family, summed again over the merged lectures by the rule an unsharded run uses."""
    from types import SimpleNamespace

    from jaxci.analysis.prediction import families, of_lecture
    from jaxci.audit.judging.every_family import build_totals

    return build_totals([SimpleNamespace(predicted={f: p for f in families(lec) if (p := of_lecture(lec, f))})
                         for lec in lectures])


def _execution(blocks: list[dict], owned: list[set]) -> dict:
    """Every owned lecture's run keys, and the reused runs, from the shard that ran them."""
    keys = {p: k for b, mine in zip(blocks, owned) for p, k in (b.get("keys") or {}).items() if p in mine}
    reused = [r for b, mine in zip(blocks, owned) for r in b.get("reused") or [] if r.rsplit(" [", 1)[0] in mine]
    return {"keys": dict(sorted(keys.items())), "reused": sorted(reused)}


def _seconds(run) -> str:
    value = run.get("cells_s") if isinstance(run, dict) and run.get("cells") else None
    return "-" if value is None else f"{value:.2f}"


def to_markdown(doc: dict) -> str:
    """A short table of a merged audit, from its records (the full table, `jaxci audit --format md`, is drawn
    from the verdicts themselves: this one has the columns a record carries as they are)."""
    ran = {p for lec in doc.get("lectures", []) if (p := accelerator_run(lec.get("runs") or {})[0]) is not None} \
        - {"cuda", "rocm", "gpu"}
    accelerator_s = f"{'_'.join(sorted(ran))}_s" if ran else "gpu_s"   # a TPU's seconds never headed gpu_s
    columns = ["lecture", "status", "regime", "recommendation", "basis", "cpu_s", accelerator_s, "proposed_timeout_s",
               "why", "not_executed"]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for lec in doc.get("lectures", []):
        runs = lec.get("runs") or {}
        values = [lec.get("path"), lec.get("status"), lec.get("regime"), lec.get("recommendation"), lec.get("basis"),
                  _seconds(runs.get("cpu")), _seconds(accelerator_run(runs)[1]),
                  f"{lec['proposed_timeout']:.0f}" if lec.get("proposed_timeout") else "-", lec.get("why"),
                  lec.get("not_executed")]
        lines.append("| " + " | ".join(quoting.cell(v or "") for v in values) + " |")
    pins = doc.get("pin_to_cpu") or []
    if pins:
        lines += ["", PIN_HEADING + ": " + ", ".join(quoting.code(p) for p in pins)]
    return "\n".join(lines) + "\n"
