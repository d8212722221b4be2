"""Packing a capture into OUT: capture.json (the manifest `jaxci import` checks: the data, every figure a reader
takes, e.g. facts.start_s), summary.md (the same for a person, with every value: prose, never read back),
results.tar.gz (asv's results) and logs.tar.gz (step logs, artifacts). Each file
is written under a temporary name and renamed, so a kill from outside never leaves half a file.

The functions take the capture's state (jaxci.capture.run.Capture) by its attributes: out, work, results,
machine, rehearse, started_utc, budget_s, elapsed(), facts, records, notes.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

from jaxci.capture.plan import plan
from jaxci.util.safeio import load_json

FORMAT = 1                      # capture.json format, checked by `jaxci import`
MAX_FILES, MAX_FILE_BYTES = 8, 16 * 2**20
LOG_KEEP_BYTES = 2 * 2**20      # per step log kept in the archive (head and tail)


def manifest(cap) -> dict:
    return {"format": FORMAT, "machine": cap.machine, "rehearsal": cap.rehearse,
            "started": cap.started_utc, "budget_s": cap.budget_s, "wall_s": round(cap.elapsed(), 1),
            "facts": cap.facts, "steps": cap.records, "notes": cap.notes,
            "plan": [{"step": s.name, "question": s.question, "primitive": s.primitive, "call": s.call,
                      "combinations": len(s.combos), "measured_before": s.measured} for s in plan()]}


def summary(cap) -> str:
    m, facts = manifest(cap), cap.facts
    accelerator = facts.get("accelerator") or {}
    kind = "TPU" if accelerator.get("platform") == "tpu" else "GPU"   # a TPU's capture is never titled a GPU's
    rehearsal = " (rehearsal: no GPU, gpu combinations n/a)" if cap.rehearse else ""
    lines = [f"# {kind} capture on {cap.machine}{rehearsal}",
             "", f"- started {m['started']}, budget {cap.budget_s:.0f} s, wall {m['wall_s']:.0f} s",
             f"- commit {facts.get('commit', '?')[:12]} ({facts.get('commit_source')})",
             f"- jax {facts.get('jax')}; gpu: {facts.get('gpu')}; driver {facts.get('gpu_driver')}"
             + (f"; accelerator: {accelerator.get('device_kind')} ({accelerator.get('platform')}, "
                f"{accelerator.get('memory_mib', '?')} MiB)" if accelerator else ""),
             f"- process start (import JAX + one op): {_starts(facts.get('start_s'))}", "",
             "| step | status | estimate s | seconds |", "|---|---|---|---|"]
    for r in cap.records:
        lines.append(f"| {r['step']} | {r.get('why') and 'not reached: ' + r['why'] or r['status']} | "
                     f"{r.get('estimate_s', '')} | {r.get('seconds', '')} |")
    lines += [""] + [f"- note: {n}" for n in cap.notes]
    lines += ["", "## Values", ""] + values(cap.results)
    lines += profiles(cap.work / "artifacts" / "profiles")
    return "\n".join(lines) + "\n"


def _starts(value) -> str:
    """The probed process starts for a person ("cpu 1.31 s, gpu 3.54 s"); the data is capture.json's."""
    if not isinstance(value, dict) or not value:
        return "not probed"
    return ", ".join(f"{d} {s} s" for d, s in value.items())


def _num(value, fmt: str) -> str:
    return "" if value is None else format(value, fmt)


def profiles(folder: Path) -> list[str]:
    """The profile step's summaries (jaxci.capture.profiles): device time vs gaps per kernel and device."""
    rows = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            s = load_json(path)
        except (OSError, ValueError) as exc:
            rows.append(f"| {path.name} | unreadable: {exc} | | | | |")
            continue
        if s.get("status") != "ok":
            rows.append(f"| {path.stem} | {s.get('status')} | | | | |")
            continue
        busy, gaps = s.get("device_busy_s"), s.get("gap_fraction")
        top = "; ".join(f"{k['name'][:40]} x{k['count']} {k['mean_s'] * 1e6:.1f} us"
                        for k in s.get("device_top", [])[:3])
        rows.append(f"| {path.stem} | {s['wall_s']:.6f} | {_num(busy, '.6f')} | {_num(gaps, '.3f')} | "
                    f"{_num(s.get('device_ops_per_iteration'), '.1f')} | {top or s.get('note', '')} |")
    if not rows:
        return []
    return ["", "## Profiles (jax.profiler: device time vs gaps)", "",
            "| kernel-dtype-device | wall s | device busy s | gap fraction | device ops per step | top kernels |",
            "|---|---|---|---|---|---|", *rows]


def values(results: Path) -> list[str]:
    """Every measured, skipped and failed combination of the results (read back through asv)."""
    try:
        from jaxci.results.records import load_results

        rs = load_results(results)
    except Exception as exc:  # a summary must never stop the pack (asv may be missing: a failed preparation)
        return [f"results not readable: {exc}"]
    counts = {"ok": 0, "skipped": 0, "failed": 0}
    rows = []
    for r in sorted(rs.records, key=lambda r: (r.benchmark, str(r.params))):
        counts[r.status] = counts.get(r.status, 0) + 1
        if r.status != "skipped":
            params = " ".join(f"{k}={v}" for k, v in r.params.items())
            rows.append(f"- {r.status:6s} {r.benchmark} {params}" + (f" = {r.value:.6g} {r.unit}" if r.ok else ""))
    return [f"{counts['ok']} ok, {counts['failed']} failed, {counts['skipped']} n/a"] + rows


def pack(cap) -> list[Path]:
    """OUT gets: capture.json, summary.md, results.tar.gz (asv results), logs.tar.gz (logs, artifacts).
    Written to temporary names first and renamed, so a kill never leaves half a file."""
    cap.out.mkdir(parents=True, exist_ok=True)
    files = {"capture.json": json.dumps(manifest(cap), indent=1).encode(), "summary.md": summary(cap).encode()}
    written = [_atomic(cap, name, lambda tmp, data=data: tmp.write_bytes(data)) for name, data in files.items()]
    written.append(_atomic(cap, "results.tar.gz", lambda tmp: _tar(tmp, [cap.results], "results")))
    logs = [p for p in (cap.work / "logs", cap.work / "artifacts") if p.exists()]
    written.append(_atomic(cap, "logs.tar.gz", lambda tmp: _tar(tmp, logs, None, trim=True)))
    too_big = [p for p in written if p.stat().st_size >= MAX_FILE_BYTES]
    if too_big:
        cap.notes.append(f"over 16 MiB, replaced by its tail: {', '.join(p.name for p in too_big)}")
        for p in too_big:
            if p.name == "logs.tar.gz":
                _atomic(cap, p.name, lambda tmp: _tar(tmp, logs, None, trim=True, keep=64 * 1024))
    return written


def _atomic(cap, name: str, write) -> Path:
    tmp = cap.work / f".{name}.tmp"
    write(tmp)
    final = cap.out / name
    shutil.move(str(tmp), str(final))
    return final


def _tar(path: Path, dirs: list[Path], arcname: str | None, trim: bool = False, keep: int = LOG_KEEP_BYTES):
    with tarfile.open(path, "w:gz") as tar:
        for d in dirs:
            if not d.exists():
                continue
            for f in sorted(p for p in d.rglob("*") if p.is_file()):
                rel = Path(arcname or d.name) / f.relative_to(d)
                if trim and f.suffix in (".log", ".txt") and f.stat().st_size > keep:
                    data = trim_text(f.read_text(errors="replace"), keep).encode()
                    info = tarfile.TarInfo(str(rel))
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
                else:
                    tar.add(f, arcname=str(rel))


def trim_text(text: str, keep: int = LOG_KEEP_BYTES) -> str:
    """The head and tail of a long log, `keep` characters in all, with how much was cut between them."""
    if len(text) <= keep:
        return text
    half = keep // 2
    return text[:half] + f"\n... [{len(text) - keep} characters cut by gpu_capture] ...\n" + text[-half:]
