"""Delta fields of compatible chat servers beyond the OpenAI reference.

The ``openai-chat`` adapter (``openai_chat.py``) hands these fields here:

* **Typed content parts** (Mistral). Mistral's reasoning models send
  ``delta.content`` as a list of typed chunks instead of a string (Mistral
  API reference, "ContentChunk" / "ThinkChunk" / "TextChunk", checked
  2026-12-01; recorded in vercel/ai's ``mistral-reasoning.chunks.txt``)::

      {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "..."}]}]}
      {"content": [{"type": "text", "text": "2 + 2 = 4"}]}

  A ``text`` part becomes a ``TextDelta``; each ``text`` chunk inside a
  ``thinking`` part (its ``thinking`` list, or a plain string) becomes a
  ``ReasoningDelta``. The other documented chunk types carry no text
  (``image_url``, ``document_url``, ``file``, ``audio``, ``reference``
  with its ``reference_ids``, ``tool_reference``): they are counted as
  unknown fields by type (``choices[].delta.content[].reference``), as are
  non-text chunks inside a thinking part. A part that is not an object, or a
  ``text`` whose value is not a string, is a protocol conflict.
* **Message extras kept for the next turn.** OpenRouter's
  ``delta.annotations`` (URL citations of its web plugin, recorded in
  pydantic-ai's ``test_openrouter_web_search_annotations_stream`` cassette)
  have no unified event: choice 0's are kept verbatim, in arrival order, in
  ``StreamResult.provider_content`` as one item ``{"annotations": [...]}``.
  Groq's ``delta.executed_tools`` (its server-run tools) are server tool
  calls (``openai_chat_calls.py``); their entries, merged by ``index`` as
  Groq repeats them with the tool's output, are kept the same way as
  ``{"executed_tools": [...]}``. The item of each field is created the first
  time the field arrives, so ``provider_content`` lists them in that order.
"""

from __future__ import annotations

from typing import Any

from ..accumulate import Accumulator, ChoiceState
from ..events import Event, new_reasoning_delta, new_text_delta

__all__ = ["MAX_KEPT", "ChatParts"]

#: Cap on the annotations (and executed-tool entries) kept for the next turn.
MAX_KEPT = 1000
#: Unknown part types are counted under a name of at most this many characters.
_NAME_CHARS = 64


class ChatParts:
    """Typed content parts and message extras of one chat stream."""

    def __init__(self, acc: Accumulator) -> None:
        self._acc = acc
        #: ``provider_content`` items by field name (``annotations``, ``executed_tools``).
        self._kept: dict[str, dict[str, Any]] = {}
        #: The position of each executed-tool entry by its ``index`` (Groq
        #: repeats an entry with its output: the repeat is merged into it).
        self._executed: dict[int, int] = {}

    # --- typed content parts ----------------------------------------------

    def on_content_parts(self, state: ChoiceState, parts: list[Any], out: list[Event]) -> None:
        """A ``delta.content`` list: each text part to text, each thinking part to reasoning."""
        acc = self._acc
        index = state.index
        for part in parts:
            if type(part) is not dict:
                acc.conflict(f"a delta.content part of choice {index} is not an object")
                continue
            kind = part.get("type")
            if kind == "text":
                text = part.get("text")
                if type(text) is not str:
                    acc.conflict(f"a text part of choice {index} has no text string")
                elif text:
                    state.text.append(text)
                    out.append(new_text_delta(text, index))
            elif kind == "thinking":
                self._thinking(state, part.get("thinking"), out)
            else:
                acc.unknown_field("choices[].delta.content[]." + _name(kind))

    def _thinking(self, state: ChoiceState, thinking: Any, out: list[Event]) -> None:
        if type(thinking) is str:
            chunks: list[Any] = [{"type": "text", "text": thinking}]
        elif type(thinking) is list:
            chunks = thinking
        else:
            self._acc.conflict(f"a thinking part of choice {state.index} has no thinking list")
            return
        for chunk in chunks:
            text = chunk.get("text") if type(chunk) is dict else None
            if type(text) is str and chunk.get("type", "text") == "text":
                if text:
                    state.reasoning.append(text)
                    out.append(new_reasoning_delta(text, None, None, "text", state.index))
            else:
                kind = chunk.get("type") if type(chunk) is dict else None
                self._acc.unknown_field("choices[].delta.content[].thinking[]." + _name(kind))

    # --- message extras -----------------------------------------------------

    def on_annotations(self, state: ChoiceState, annotations: Any) -> None:
        """``delta.annotations``: choice 0's are kept verbatim for the next turn."""
        if type(annotations) is not list:
            self._acc.conflict(f"delta.annotations of choice {state.index} is not a list")
            return
        if state.index != 0:
            return
        kept = self._values("annotations")
        room = MAX_KEPT - len(kept)
        if annotations and room > 0:
            self._keep("annotations", kept + annotations[:room])

    def keep_executed_tool(self, index: int, entry: dict[str, Any]) -> None:
        """Merges one of choice 0's ``executed_tools`` entries into ``provider_content``."""
        kept = self._values("executed_tools")
        position = self._executed.get(index)
        if position is not None:
            kept = list(kept)
            kept[position] = {**kept[position], **entry}
        elif len(kept) < MAX_KEPT:
            self._executed[index] = len(kept)
            kept = [*kept, dict(entry)]
        else:
            return
        self._keep("executed_tools", kept)

    def _values(self, field: str) -> list[Any]:
        """The values kept under ``field``; its item is created the first time."""
        item = self._kept.get(field)
        if item is None:
            item = self._kept[field] = {field: []}
            self._acc.provider_content.append(item)
        values: list[Any] = item[field]
        return values

    def _keep(self, field: str, values: list[Any]) -> None:
        # A new item, never the old one changed: results already read share it.
        item = {field: values}
        self._acc.replace_content(self._kept[field], item)
        self._kept[field] = item


def _name(kind: Any) -> str:
    """A bounded name for an unknown part type (``<untyped>`` when it has none)."""
    if type(kind) is not str or not kind:
        return "<untyped>"
    return kind[:_NAME_CHARS]
