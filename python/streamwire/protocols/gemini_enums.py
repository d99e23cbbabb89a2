"""Gemini's enums on the wire: a value's name, or its number.

The proto3 JSON mapping (protobuf.dev, "ProtoJSON Format", checked
2026-12-02): an enum is written as "the name of the enum value as specified
in proto"; "parsers accept both enum names and integer values". A client
that asks for ``$alt=json;enum-encoding=int`` (the REST transports of
Google's generated clients do) gets ``"finishReason": 1``.

Vertex AI and the Gemini API number the same names differently from 6 on,
so a number is read with the numbering of the API that sent it (the tables
below, each from its reference, checked 2026-12-02):

* Vertex AI: ``google.cloud.aiplatform.v1.Candidate.FinishReason`` and
  ``GenerateContentResponse.PromptFeedback.BlockedReason`` (Google Cloud
  reference of google-cloud-aiplatform v1, e.g. cloud.google.com/ruby/docs/
  reference/google-cloud-ai_platform-v1, "Candidate::FinishReason":
  ``STOP`` value 1, ``MODEL_ARMOR`` 10; and the v1 ``content.proto`` of
  Google's generated clients, which adds 11 to 16).
* The Gemini API: ``google.ai.generativelanguage.v1beta.Candidate.FinishReason``
  and ``GenerateContentResponse.PromptFeedback.BlockReason``
  (googleapis/googleapis, ``google/ai/generativelanguage/v1beta/
  generative_service.proto``: ``LANGUAGE = 6``, ``BLOCKLIST = 7``, ...).

``enum_numbering`` (an option of ``gemini`` and ``gemini-json``) names the
API: ``"vertex"``, ``"gemini-api"``, or ``"either"`` (the default, since a
stream does not say which API sent it): then a number both tables give the
same name is that name; one they name differently (or only one names) is
kept as its decimal text and reported (``ambiguous_enum_number``), and
means what its names mean when they agree (7: ``PROHIBITED_CONTENT`` or ``BLOCKLIST``, a
filter either way), else nothing known. A number no table names is kept and
reported (``unknown_enum_number``), never a conflict; a name is taken as it
is. Anything else (a bool, a float, an integer outside int32, an object)
cannot be an enum on the wire: ``read_enum`` returns None and the caller
records the conflict.

Streamwire reads no other Gemini enum: safety ratings and the modalities of
usage details are kept verbatim (``usage.raw``, ``provider_content``), and a
``Content.role`` is a string in both references, not an enum.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from ..kinds import EnumNumbering

__all__ = [
    "BLOCK_REASONS",
    "FINISH_REASONS",
    "NO_NUMBERS",
    "EnumNumbering",
    "EnumTable",
    "Reading",
    "read_enum",
    "shown",
]

_INT32 = range(-(1 << 31), 1 << 31)


class EnumTable(NamedTuple):
    """One enum's numbers, per API."""

    #: The enum's name, for warnings.
    name: str
    vertex: Mapping[int, str]
    gemini_api: Mapping[int, str]


class Reading(NamedTuple):
    """An enum value as read: ``raw`` is its name, or a number's decimal text;
    ``names`` what it may be (one name; two for an ambiguous number; none);
    ``warning`` the ``(code, message)`` to report a number read with doubt by."""

    raw: str
    names: tuple[str, ...]
    warning: tuple[str, str] | None = None


_SHARED_FINISH = {
    0: "FINISH_REASON_UNSPECIFIED",
    1: "STOP",
    2: "MAX_TOKENS",
    3: "SAFETY",
    4: "RECITATION",
    5: "OTHER",
}
FINISH_REASONS = EnumTable(
    "FinishReason",
    vertex={
        **_SHARED_FINISH,
        6: "BLOCKLIST",
        7: "PROHIBITED_CONTENT",
        8: "SPII",
        9: "MALFORMED_FUNCTION_CALL",
        10: "MODEL_ARMOR",
        11: "IMAGE_SAFETY",
        12: "IMAGE_PROHIBITED_CONTENT",
        13: "IMAGE_RECITATION",
        14: "IMAGE_OTHER",
        15: "UNEXPECTED_TOOL_CALL",
        16: "NO_IMAGE",
    },
    gemini_api={
        **_SHARED_FINISH,
        6: "LANGUAGE",
        7: "BLOCKLIST",
        8: "PROHIBITED_CONTENT",
        9: "SPII",
        10: "MALFORMED_FUNCTION_CALL",
        11: "IMAGE_SAFETY",
        12: "UNEXPECTED_TOOL_CALL",
        13: "TOO_MANY_TOOL_CALLS",
        14: "IMAGE_PROHIBITED_CONTENT",
        15: "IMAGE_OTHER",
        16: "NO_IMAGE",
        17: "IMAGE_RECITATION",
    },
)
_SHARED_BLOCK = {
    0: "BLOCK_REASON_UNSPECIFIED",
    1: "SAFETY",
    2: "OTHER",
    3: "BLOCKLIST",
    4: "PROHIBITED_CONTENT",
}
BLOCK_REASONS = EnumTable(
    "BlockReason",
    vertex={**_SHARED_BLOCK, 5: "MODEL_ARMOR", 6: "JAILBREAK"},
    gemini_api={**_SHARED_BLOCK, 5: "IMAGE_SAFETY"},
)
#: An enum whose numbers no reference we checked gives (Gemini Live's
#: ``turnCompleteReason``): every number is kept and reported.
NO_NUMBERS = EnumTable("enum", vertex={}, gemini_api={})


def read_enum(
    value: object, table: EnumTable, numbering: EnumNumbering, where: str
) -> Reading | None:
    """``value`` (a name or a number; ``where`` names it in warnings) as read
    by ``numbering``; None when it cannot be an enum value."""
    if type(value) is str:
        return Reading(value, (value,))
    if type(value) is not int or value not in _INT32:
        return None
    vertex = table.vertex.get(value) if numbering != "gemini-api" else None
    gemini = table.gemini_api.get(value) if numbering != "vertex" else None
    raw = str(value)
    if vertex == gemini or numbering != "either":
        name = vertex or gemini
        if name is not None:
            return Reading(name, (name,))
        message = f"{where} is {raw}, a number {table.name} does not name"
        return Reading(raw, (), ("unknown_enum_number", message))
    message = (
        f"{where} is {raw}: {table.name} {vertex or 'names no such value'} on Vertex AI, "
        f"{gemini or 'names no such value'} on the Gemini API (the option enum_numbering "
        "says which API sent it)"
    )
    names = tuple(n for n in (vertex, gemini) if n is not None)
    return Reading(raw, names, ("ambiguous_enum_number", message))


def shown(value: object) -> str:
    """A value that is no enum, shown short (for a conflict, and as the raw
    reason); never raises, even for an integer too long for ``repr``."""
    if type(value) is int and value not in _INT32:
        return f"<an integer of {value.bit_length()} bits>"
    try:
        return repr(value)[:80]
    except (ValueError, RecursionError):
        return f"<a {type(value).__name__}>"
