"""Scenario input as the bounded document worker reads it: bytes in, an encoded document out.

:func:`parse_scenario` runs inside a :class:`~backbone.api.isolation.DocumentWorkers` process. It reads a
canonical JSON request body, or an uploaded file of any accepted format
(:func:`backbone.io.untrusted.load_document`: self-contained documents only), validates it, checks
the server's caps (sites, links, candidates, demands, datasets, training jobs; the stored size) and hands back the encoded
canonical document, so the API process stores bytes without building the document's objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backbone.api.input_policy import check_scenario_document
from backbone.api.isolation import DocumentLimitError
from backbone.api.settings import Settings
from backbone.api.store import EncodedDocument
from backbone.errors import Problem, ValidationError

REQUEST_BODY = "request body"


@dataclass(frozen=True)
class ParsedScenario:
    """A validated scenario, encoded for the store."""

    document: EncodedDocument
    counts: dict[str, int]
    source_format: str


def check_caps(net: Any, settings: Settings, file: str) -> None:
    """Refuse a scenario over the server's caps (sites, links, candidates, demands, datasets, training jobs), naming
    each cap; and one without sites. Candidates count against the link cap, datasets and training jobs against the
    demand cap (each job's flows become demands).

    Raises
    ------
    ValidationError
        One problem per table over its cap.
    """
    problems = []
    if len(net.sites) == 0:
        problems.append(Problem("a scenario needs at least one site", file=file, table="sites"))
    for table, limit, variable in (("sites", settings.max_sites, "BACKBONE_MAX_SITES"),
                                   ("links", settings.max_links, "BACKBONE_MAX_LINKS"),
                                   ("demands", settings.max_demands, "BACKBONE_MAX_DEMANDS"),
                                   ("candidates", settings.max_links, "BACKBONE_MAX_LINKS"),
                                   ("datasets", settings.max_demands, "BACKBONE_MAX_DEMANDS"),
                                   ("training_jobs", settings.max_demands, "BACKBONE_MAX_DEMANDS")):
        n = len(getattr(net, table))
        if n > limit:
            problems.append(Problem(f"{n} {table} exceed this server's limit of {limit} ({variable})",
                                    file=file, table=table))
    if problems:
        raise ValidationError(problems)


def _check_shape(doc: dict[str, Any]) -> None:
    """The body has the types the OpenAPI document states (:class:`ScenarioDocument`), or 422."""
    import pydantic

    from backbone.api.schemas import ScenarioDocument

    try:
        ScenarioDocument.model_validate(doc, strict=True)
    except pydantic.ValidationError as exc:
        raise ValidationError([Problem(e["msg"], file=REQUEST_BODY, table=str(e["loc"][0]) if e["loc"] else "",
                                       field=".".join(str(x) for x in e["loc"])) for e in exc.errors()]) from None


def _network_from_body(body: bytes) -> Any:
    import json

    from backbone.io import network_from_dict
    from backbone.io.untrusted import parse_json_bytes, refuse_file_references

    doc = parse_json_bytes(body, REQUEST_BODY)
    if isinstance(doc, dict):
        refuse_file_references(doc, REQUEST_BODY)
        check_scenario_document(doc, REQUEST_BODY)
        _check_shape(doc)
    try:
        json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(Problem("request body has invalid Unicode (unpaired surrogate escapes)",
                                      file=REQUEST_BODY)) from None
    return network_from_dict(doc, file=REQUEST_BODY)


def parse_scenario(data: bytes, filename: str | None, settings: Settings) -> ParsedScenario:
    """Read, validate, cap and encode one scenario (run it in a bounded worker).

    Parameters
    ----------
    data
        The canonical JSON request body (``filename`` None) or the uploaded file's bytes.
    filename
        The upload's file name (its suffix names the format); None for a JSON body.
    settings
        The caps: ``max_sites``, ``max_links``, ``max_demands``, ``max_document_bytes``, ``max_body_bytes``.

    Raises
    ------
    ValidationError
        Every problem of the input (422), a file reference among them.
    DocumentLimitError
        When the canonical document would exceed ``max_document_bytes`` (413).
    """
    from backbone.io import network_to_dict
    from backbone.io.untrusted import DocumentLimits, load_document

    if filename is None:
        net, fmt, shown = _network_from_body(data), "canonical-json", REQUEST_BODY
    else:
        net, fmt = load_document(data, filename, DocumentLimits(max_bytes=settings.max_body_bytes))
        shown = filename.replace("\\", "/").rsplit("/", 1)[-1][:200] or "upload"
    check_caps(net, settings, shown)
    doc = network_to_dict(net)
    if filename is not None:
        check_scenario_document(doc, shown)
    encoded = EncodedDocument.of(doc)
    if encoded.size_bytes > settings.max_document_bytes:
        raise DocumentLimitError(f"the scenario is {encoded.size_bytes} bytes as canonical JSON; this server stores "
                                 f"at most {settings.max_document_bytes} (BACKBONE_MAX_DOCUMENT_BYTES)",
                                 "max_document_bytes")
    counts = {"sites": len(net.sites), "links": len(net.links), "demands": len(net.demands)}
    return ParsedScenario(encoded, counts, fmt)


def render_scenario_map(content: bytes, result_file: str | None, map_format: str, options: dict[str, Any]) -> bytes:
    """Draw a stored scenario version (optionally with a job's result file) as map bytes (run it in a
    bounded worker: matplotlib on a large scenario takes minutes and gigabytes).

    Parameters
    ----------
    content
        The stored, encoded canonical document (:class:`~backbone.api.models.ScenarioVersion` ``content``).
    result_file
        A succeeded job's result JSON, a path the server computed (never one from the request).
    map_format
        png, svg, pdf, html, geojson or kml.
    options
        ``color_by``, ``region``, ``center_lon``, ``size``, ``candidates`` of
        :func:`backbone.maps.render_map_bytes`.
    """
    import json
    from pathlib import Path

    from backbone.api.store import decode_document
    from backbone.io import network_from_dict
    from backbone.maps import render_map_bytes

    net = network_from_dict(decode_document(content), file="scenario")
    result = json.loads(Path(result_file).read_text(encoding="utf-8")) if result_file else None
    return render_map_bytes(net, map_format, result=result, **options)  # type: ignore[no-any-return]


def workloads_document(content: bytes) -> dict[str, Any]:
    """The workloads of a stored scenario version (its encoded canonical document): the ``backbone workloads
    --json`` document (:func:`backbone.workload_summary.summarise_workloads`). Run it in a bounded worker."""
    from backbone.api.store import decode_document
    from backbone.io import network_from_dict
    from backbone.workload_summary import summarise_workloads

    return summarise_workloads(network_from_dict(decode_document(content), file="scenario")).to_dict()


def diff_documents(before: bytes, after: bytes, before_label: str, after_label: str) -> dict[str, Any]:
    """What changed between two stored scenario versions (their encoded canonical documents): the
    ``backbone diff --json`` document (:func:`backbone.compare.diff`). Run it in a bounded worker."""
    from backbone.api.store import decode_document
    from backbone.compare import ComparedInput, diff
    from backbone.io import network_from_dict

    a = ComparedInput(before_label, "scenario", network_from_dict(decode_document(before), file="scenario"))
    b = ComparedInput(after_label, "scenario", network_from_dict(decode_document(after), file="scenario"))
    return diff(a, b).to_dict()


def diff_result_folders(before: str, after: str, before_label: str, after_label: str) -> dict[str, Any]:
    """What changed between two plan (or roadmap) jobs' result folders (paths the server computed, never from
    the request): the ``backbone diff --json`` document. Run it in a bounded worker."""
    from backbone.compare import diff, load_input

    return diff(load_input(before, label=before_label), load_input(after, label=after_label)).to_dict()


def render_review_deck(folder: str, baseline: str | None, baseline_label: str | None) -> bytes:
    """The review deck (``.pptx``) of a plan or roadmap job's result folder, compared with ``baseline``'s when
    given (paths the server computed): :func:`backbone.review.deck_bytes`. Run it in a bounded worker."""
    from backbone.review import deck_bytes

    return deck_bytes(folder, baseline=baseline, baseline_label=baseline_label)[0]


def render_period_map(folder: str, map_format: str, options: dict[str, Any]) -> bytes:
    """Draw one period of a roadmap job: the canonical scenario folder the roadmap wrote under
    ``periods/<period>/scenario/`` (a path the server computed from its own result files, never one from the
    request), in any map format (run it in a bounded worker).

    Parameters
    ----------
    folder
        The period's scenario folder (``scenario.yaml`` and its tables).
    map_format
        png, svg, pdf, html, geojson or kml.
    options
        ``center_lon``, ``size``, ``candidates`` of :func:`backbone.maps.render_map_bytes`.
    """
    from backbone.io import load_scenario
    from backbone.maps import render_map_bytes

    return render_map_bytes(load_scenario(folder), map_format, **options)  # type: ignore[no-any-return]
