"""Where each input of a prediction came from, kept beside its sentence so that code and tests read a structure.

A prediction's inputs are sentences for a reader ("dispatch floor 12.0 µs (TinyOp float32, lab-h200 gpu)"). Each
sentence also carries the sources it rests on: a machine whose asv records were measured, a published figure
(with the published figures it was derived from), a catalogue family's sourced spec, a machine's registration,
or a calibrated constant. Code that must know what a number rests on (a published check that would compare a
number with its own input; the pure-Python probe that must not move by itself) reads `sources`, never the
sentence. `render` is the one place the sentences become the prediction's text.
"""

from __future__ import annotations

from dataclasses import dataclass

MEASURED = "measured"          # origin: the machine whose records (or capture summaries) gave the figure
PUBLISHED = "published"        # origin: the published source; figures: the published figures it came from
CATALOGUE = "catalogue"        # origin: the catalogue family whose sourced spec was read
REGISTRATION = "registration"  # origin: the machine whose asv registration gave the figure
CALIBRATED = "calibrated"      # origin: what the constant was calibrated on
KINDS = (MEASURED, PUBLISHED, CATALOGUE, REGISTRATION, CALIBRATED)   # the order a description names them in


@dataclass(frozen=True, order=True)
class Source:
    kind: str
    origin: str
    figures: frozenset = frozenset()


@dataclass(frozen=True)
class Input:
    """One sentence of a prediction's inputs and the sources it rests on (none: the model's own rule)."""
    text: str
    sources: frozenset = frozenset()

    def __str__(self) -> str:
        return self.text


def sources_of(*parts) -> frozenset:
    """The sources of Inputs and Sources (a plain sentence contributes none)."""
    out: set = set()
    for part in parts:
        if isinstance(part, Source):
            out.add(part)
        elif isinstance(part, Input):
            out |= part.sources
        elif isinstance(part, (list, tuple, set, frozenset)):
            out |= sources_of(*part)
    return frozenset(out)


def cite(text: str, *by) -> Input:
    """A sentence resting on the sources of `by` (Inputs, Sources, lists of either)."""
    return Input(text, sources_of(*by))


def measured(machine: str, text) -> Input:
    return Input(str(text), sources_of(text) | {Source(MEASURED, machine)})


def published(evidence, text) -> Input:
    """A sentence resting on published figures (jaxci.analysis.evidence.Evidence, one or several)."""
    ev = evidence if isinstance(evidence, (list, tuple)) else [evidence]
    return Input(str(text), sources_of(text) | {Source(PUBLISHED, e.source, e.figures) for e in ev})


def catalogue(family: str, text) -> Input:
    return Input(str(text), sources_of(text) | {Source(CATALOGUE, family)})


def registered(machine: str, text) -> Input:
    return Input(str(text), sources_of(text) | {Source(REGISTRATION, machine)})


def sentences(inputs) -> list[str]:
    """Each sentence of the inputs once, in order."""
    return list(dict.fromkeys(str(i) for i in inputs))


def render(inputs) -> str:
    """The inputs as the prediction shows them: its sentences joined with "; "."""
    return "; ".join(sentences(inputs))


def as_json(sources) -> list[dict]:
    """The sources as JSON: [{"kind", "origin"}], sorted."""
    return [{"kind": s.kind, "origin": s.origin} for s in sorted(sources)]


def figure_name(case: str, family: str, device: str) -> str:
    """The one name of a published figure: its case, the family and the device it was published on."""
    return f"{case} | {family} {device}"


def derived_from(sources, figure: str) -> bool:
    """Whether a published source came from the published figure named `figure` (figure_name)."""
    return any(s.kind == PUBLISHED and figure in s.figures for s in sources)


def describe(sources, brief: bool = False) -> str:
    """What a number rests on, a clause per kind: "measured lab-epyc-2c, lab-h200; published incidents.md: …".
    `brief`: "measured on lab-h200; published: incidents.md (4); catalogue": each published file once with its
    count of sources, the catalogue and registrations without their machines."""
    kinds: dict = {kind: [] for kind in KINDS}
    for s in sorted(sources):
        origin = s.origin.split(":")[0] if brief and s.kind == PUBLISHED else s.origin
        kinds.setdefault(s.kind, []).append(origin)
    if brief:
        return "; ".join(_brief(kind, origins) for kind, origins in kinds.items() if origins)
    return "; ".join(f"{kind} {', '.join(dict.fromkeys(origins))}" for kind, origins in kinds.items() if origins)


def _brief(kind: str, origins: list) -> str:
    if kind in (CATALOGUE, REGISTRATION):
        return kind
    if kind == MEASURED:
        return "measured on " + ", ".join(dict.fromkeys(origins))
    return f"{kind}: " + ", ".join(f"{o} ({origins.count(o)})" if kind == PUBLISHED else o
                                   for o in dict.fromkeys(origins))


def rests_on(sources, kind: str, origin: str | None = None) -> bool:
    """Whether any source is of `kind` (and from `origin`, when given)."""
    return any(s.kind == kind and (origin is None or s.origin == origin) for s in sources)
