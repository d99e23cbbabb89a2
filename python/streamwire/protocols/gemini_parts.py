"""Gemini ``Part`` lists into unified events: text, thoughts, signatures, function calls.

Shared by the ``gemini`` and ``gemini-json`` adapters and by ``gemini-live``
(its ``serverContent.modelTurn.parts`` are the same ``Part`` objects):
``GeminiParts.on_parts(candidate, parts, out)`` applies one list of *new*
parts (Gemini streams whole parts, not deltas of one document) to a
candidate. Gemini API reference ``Content`` / ``Part`` / ``FunctionCall``,
the "Thought signatures" guide, and Vertex AI's ``FunctionCall.partialArgs``
/ ``willContinue``, all checked 2026-11-29; what each part becomes is
docs/protocols/gemini.md.

A ``thoughtSignature`` may sit on any part and must go back on the part
that carried it, so it stays there in ``provider_content``, and a signed
part is never merged with another. A ``functionCall`` arrives whole, or, with
Vertex AI's streamed arguments, as a call that continues
(``gemini_partial_args.py``); the call machine is data
(``CALL_TRANSITIONS``). A call without a provider id gets a synthetic one,
``gemini-{responseId}-{candidate}-{n}``, never sent back.

``Candidate.provider_content()`` is the candidate's parts in Gemini's
request format; the adapters expose candidate 0's as
``StreamResult.provider_content``.

Reuse (``gemini-live``): make one ``GeminiParts(acc)`` per stream, one
``candidate(choice_state)`` per model turn, feed ``on_parts`` every parts
list, call ``finish`` at the turn's end; set ``response_id`` (or leave it for
the random token) before calls arrive. Calls with provider ids keep them.
"""

from __future__ import annotations

import json
import secrets
from collections import deque
from collections.abc import Mapping
from typing import Any, Literal

from ..accumulate import Accumulator, ChoiceState, Joined
from ..events import Event, ToolCallCompleted, new_reasoning_delta, new_text_delta
from ..toolcalls import CallBuffer
from .gemini_partial_args import PartialArgs

__all__ = ["CALL_TRANSITIONS", "Candidate", "GeminiParts", "classify_call"]

CallPhase = Literal["idle", "streaming"]
#: What one ``functionCall`` object (or the candidate's end) is to the call machine.
CallInput = Literal["whole", "start", "single", "continue", "last", "end", "finish"]

#: ``(phase, input) -> (action, next phase)``: the per-candidate call machine.
CALL_TRANSITIONS: Mapping[tuple[CallPhase, CallInput], tuple[str, CallPhase]] = {
    ("idle", "whole"): ("whole", "idle"),
    ("idle", "start"): ("open", "streaming"),
    ("idle", "single"): ("single", "idle"),
    ("idle", "continue"): ("orphan", "idle"),
    ("idle", "last"): ("orphan", "idle"),
    # An empty ``functionCall: {}`` with no call streaming names nothing and
    # carries nothing: it contradicts nothing either (a warning).
    ("idle", "end"): ("stray_end", "idle"),
    ("idle", "finish"): ("nothing", "idle"),
    # A whole call while another streams: recorded, and a conflict.
    ("streaming", "whole"): ("interleaved", "streaming"),
    # A named fragment while a call streams: the same name is a repeat (a
    # no-op), another name a conflict (the new call replaces the open one).
    ("streaming", "start"): ("restart", "streaming"),
    ("streaming", "single"): ("restart_end", "idle"),
    ("streaming", "continue"): ("apply", "streaming"),
    ("streaming", "last"): ("apply_end", "idle"),
    ("streaming", "end"): ("end", "idle"),
    # The candidate finished with a call still streaming: never completed.
    ("streaming", "finish"): ("abandon", "idle"),
}
PHASES: tuple[CallPhase, ...] = ("idle", "streaming")
INPUTS: tuple[CallInput, ...] = ("whole", "start", "single", "continue", "last", "end", "finish")

#: Part keys that carry something of their own (no unified event, kept verbatim).
OTHER_PARTS = frozenset(
    {
        "inlineData",
        "fileData",
        "executableCode",
        "codeExecutionResult",
        "functionResponse",
        "toolCall",
        "toolResponse",
    }
)
#: Part keys that qualify a part (metadata, never content on their own).
PART_QUALIFIERS = frozenset(
    {"thought", "thoughtSignature", "videoMetadata", "partMetadata", "mediaResolution"}
)
_FUNCTION_CALL_FIELDS = frozenset({"name", "args", "id", "partialArgs", "willContinue"})


def classify_call(fc: Mapping[str, Any]) -> CallInput:
    """The call-machine input for one ``functionCall`` object."""
    named = bool(fc.get("name"))
    continues = fc.get("willContinue") is True
    partial = fc.get("partialArgs") is not None
    if named:
        if continues:
            return "start"
        return "single" if partial else "whole"
    if continues:
        return "continue"
    if partial or fc.get("args") is not None:
        return "last"
    return "end"


class _Text:
    """A run of text (or thought) parts, merged until a signature closes it.

    The text itself lives once, in the choice's ``text`` (or ``reasoning``)
    list: the run is the slice ``source[start:end]`` (``end`` None while the run
    is the candidate's last item, joined incrementally for each snapshot). A
    run from the list's start shares the choice's own join of it (``whole``),
    which a result reads anyway: the text is joined once for both.
    """

    __slots__ = ("end", "joined", "signature", "source", "start", "thought")

    def __init__(
        self, thought: bool, signature: str | None, source: list[str], whole: Joined
    ) -> None:
        self.thought = thought
        self.signature = signature
        self.source = source
        self.start = len(source)
        self.end: int | None = None
        self.joined = whole if self.start == 0 else Joined(self.start)

    def open(self) -> bool:
        """Whether the run can still grow (it is the candidate's last item)."""
        return self.end is None

    def render(self) -> dict[str, Any]:
        if self.end is None:
            text = self.joined.of(self.source)
        else:
            text = "".join(self.source[self.start : self.end])
        part: dict[str, Any] = {"text": text}
        if self.thought:
            part["thought"] = True
        if self.signature is not None:
            part["thoughtSignature"] = self.signature
        return part


class _CallPart:
    """A function-call part, rendered from its call's state when a result is read."""

    __slots__ = ("args", "call", "signature")

    def __init__(self, call: CallBuffer, signature: str | None, args: PartialArgs | None) -> None:
        self.call = call
        self.signature = signature
        self.args = args

    def open(self) -> bool:
        """Whether the call is still streaming its arguments."""
        return self.call.state == "collecting"

    def render(self) -> dict[str, Any]:
        call = self.call
        fc: dict[str, Any] = {"name": call.name}
        if call.id is not None and call.id_source == "provider":
            fc["id"] = call.id
        if call.arguments is not None:
            fc["args"] = call.arguments
        elif self.args is not None:
            fc["args"] = self.args.snapshot()  # still streaming
        part: dict[str, Any] = {"functionCall": fc}
        if self.signature is not None:
            part["thoughtSignature"] = self.signature
        return part


class Candidate:
    """One candidate's state beyond its ``ChoiceState``: the call machine and content."""

    __slots__ = (
        "args",
        "call",
        "content",
        "phase",
        "plain",
        "rendered",
        "state",
        "view",
        "waiting_ids",
        "waiting_names",
    )

    def __init__(self, state: ChoiceState) -> None:
        self.state = state
        #: The complete client calls a ``functionResponse`` may answer, by
        #: provider id and by name (a served call is skipped where it is met).
        self.waiting_ids: dict[str, CallBuffer] = {}
        self.waiting_names: dict[str, deque[CallBuffer]] = {}
        self.phase: CallPhase = "idle"
        #: The call being streamed (phase ``streaming``) and its arguments.
        self.call: CallBuffer | None = None
        self.args: PartialArgs | None = None
        #: The parts so far: plain dicts (verbatim), text runs and call parts.
        self.content: list[dict[str, Any] | _Text | _CallPart] = []
        #: The last item is a run of plain text (no thought, no signature) that
        #: more plain text extends.
        self.plain = False
        #: ``content[:len(rendered)]`` rendered, once each item can no longer
        #: change (a closed run, a completed call); and that prefix as a tuple.
        self.rendered: list[dict[str, Any]] = []
        self.view: tuple[dict[str, Any], ...] = ()

    def add(self, item: dict[str, Any] | _Text | _CallPart) -> None:
        """Appends a content item, closing the text run before it."""
        content = self.content
        if content:
            last = content[-1]
            if type(last) is _Text:
                last.end = len(last.source)
        content.append(item)
        self.plain = False

    def open_plain(self) -> None:
        """Starts a run of plain text (the next text appended to the choice)."""
        state = self.state
        self.add(_Text(False, None, state.text, state.joined[0]))
        self.plain = True

    def provider_content(self) -> tuple[dict[str, Any], ...]:
        """The parts in Gemini's request format. Verbatim parts are not copied,
        and a part is rendered once it can no longer change: each snapshot
        renders only the open tail (the text run still growing, a call still
        streaming)."""
        content, rendered = self.content, self.rendered
        settled = len(rendered)
        while settled < len(content):
            item = content[settled]
            if isinstance(item, dict):
                rendered.append(item)
            elif item.open():
                break
            else:
                rendered.append(item.render())
            settled += 1
        if len(self.view) != settled:
            self.view = tuple(rendered)
        if settled == len(content):
            return self.view
        return self.view + tuple(
            item if isinstance(item, dict) else item.render() for item in content[settled:]
        )


class GeminiParts:
    """Applies Gemini parts to candidates: events, calls, content (one per stream)."""

    def __init__(self, acc: Accumulator) -> None:
        self._acc = acc
        self._calls = acc.calls
        #: The response id, for synthetic call ids (set by the adapter).
        self.response_id: str | None = None
        self._token: str | None = None
        self._actions = {
            "whole": self._whole,
            "open": self._open,
            "single": self._single,
            "orphan": self._orphan,
            "stray_end": self._stray_end,
            "interleaved": self._interleaved,
            "restart": self._restart,
            "restart_end": self._restart_end,
            "apply": self._apply,
            "apply_end": self._apply_end,
            "end": self._end,
            "abandon": self._abandon,
        }

    def candidate(self, state: ChoiceState) -> Candidate:
        """The parts state of a new candidate (choice)."""
        return Candidate(state)

    # --- text, the common case -------------------------------------------

    def text(self, cand: Candidate, text: str, out: list[Event]) -> None:
        """A plain ``{"text"}`` part (``GeminiChunks.fast_text`` inlines this)."""
        if not text:
            return
        if not cand.plain:
            if not self._acc.reserve_block(out):  # max_content_blocks
                return
            cand.open_plain()
        cand.state.text.append(text)
        out.append(new_text_delta(text, cand.state.index))

    # --- any parts -------------------------------------------------------

    def on_parts(self, cand: Candidate, parts: list[Any], out: list[Event]) -> None:
        """Applies a list of new parts to a candidate."""
        acc = self._acc
        index = cand.state.index
        for part in parts:
            if type(part) is not dict:
                acc.conflict(f"a part of candidate {index} is not an object")
                continue
            signature = part.get("thoughtSignature")
            if signature is not None and (type(signature) is not str or not signature):
                acc.conflict(f"a thoughtSignature of candidate {index} is not a string")
                signature = None
            text = part.get("text")
            if text is not None or part.get("thought") is True:
                self._text_part(cand, part, text, signature, out)
                continue
            if signature is not None:
                self._signature_event(cand, signature, out)
            fc = part.get("functionCall")
            if fc is not None:
                if type(fc) is dict:
                    self._unknown_keys(fc, _FUNCTION_CALL_FIELDS, "functionCall.")
                    self.step(cand, classify_call(fc), fc, signature, out)
                else:
                    acc.conflict(f"a functionCall of candidate {index} is not an object")
            elif OTHER_PARTS.intersection(part) or signature is not None:
                if self._acc.reserve_block(out):  # max_content_blocks
                    cand.add(part)
            for key in part:
                if key not in OTHER_PARTS and key not in PART_QUALIFIERS and key != "functionCall":
                    acc.unknown_field("candidates[].content.parts[]." + key)

    def _text_part(
        self,
        cand: Candidate,
        part: dict[str, Any],
        text: Any,
        signature: str | None,
        out: list[Event],
    ) -> None:
        state = cand.state
        if text is None:
            text = ""
        elif type(text) is not str:
            self._acc.conflict(f"a text part of candidate {state.index} is not a string")
            return
        for key in part:
            if key != "text" and key not in PART_QUALIFIERS:
                self._acc.unknown_field("candidates[].content.parts[]." + key)
        if not text and signature is None:
            return  # an empty part adds nothing
        thought = part.get("thought") is True
        content = cand.content
        run = content[-1] if content else None
        extends = (
            (type(run) is _Text and run.thought and run.signature is None and signature is None)
            if thought
            else (signature is None and cand.plain)
        )
        if not extends and not self._acc.reserve_block(out):  # max_content_blocks
            return
        if thought:
            if not extends:
                cand.add(_Text(True, signature, state.reasoning, state.joined[1]))
            if signature is not None:
                state.signatures.append(signature)
            if text:
                state.reasoning.append(text)
            out.append(new_reasoning_delta(text, signature, None, "text", state.index))
            return
        if signature is not None:
            cand.add(_Text(False, signature, state.text, state.joined[0]))
            self._signature_event(cand, signature, out)
        elif not cand.plain:
            cand.open_plain()
        if text:
            state.text.append(text)
            out.append(new_text_delta(text, state.index))

    def _signature_event(self, cand: Candidate, signature: str, out: list[Event]) -> None:
        cand.state.signatures.append(signature)
        out.append(new_reasoning_delta("", signature, None, "text", cand.state.index))

    def _unknown_keys(self, obj: dict[str, Any], known: frozenset[str], prefix: str) -> None:
        if not known.issuperset(obj):
            for key in obj:
                if key not in known:
                    self._acc.unknown_field("candidates[].content.parts[]." + prefix + key)

    # --- the call machine ------------------------------------------------

    def step(
        self,
        cand: Candidate,
        input: CallInput,
        fc: dict[str, Any],
        signature: str | None,
        out: list[Event],
    ) -> None:
        """Takes the ``CALL_TRANSITIONS`` transition for ``input`` and performs its action."""
        action, cand.phase = CALL_TRANSITIONS[cand.phase, input]
        if action != "nothing":
            self._actions[action](cand, fc, signature, out)

    def finish(self, cand: Candidate, out: list[Event]) -> None:
        """The candidate's finishReason arrived."""
        self.step(cand, "finish", {}, None, out)

    def _whole(
        self, cand: Candidate, fc: dict[str, Any], sig: str | None, out: list[Event]
    ) -> None:
        call = self._new_call(cand, fc, sig, None, out)
        if call is None:
            return
        args = fc.get("args")
        if args is not None:
            raw = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
            self._acc.append_arguments(call, raw, out)
        self._complete(cand, call, out)

    def _open(self, cand: Candidate, fc: dict[str, Any], sig: str | None, out: list[Event]) -> None:
        args = PartialArgs()
        call = self._new_call(cand, fc, sig, args, out)
        cand.call, cand.args = call, args
        if call is None:
            cand.phase = "idle"
            return
        self._fragments(cand, fc, out)

    def _single(
        self, cand: Candidate, fc: dict[str, Any], sig: str | None, out: list[Event]
    ) -> None:
        self._open(cand, fc, sig, out)
        if cand.call is not None:
            self._end(cand, fc, sig, out)

    def _orphan(
        self, cand: Candidate, fc: dict[str, Any], sig: str | None, out: list[Event]
    ) -> None:
        shown = json.dumps(fc, ensure_ascii=False)[:120]
        self._acc.conflict(
            f"a functionCall continuation of candidate {cand.state.index} names no call "
            f"it can belong to: {shown}"
        )

    def _stray_end(
        self, cand: Candidate, fc: dict[str, Any], sig: str | None, out: list[Event]
    ) -> None:
        self._acc.warn(
            "function_call_empty",
            f"candidate {cand.state.index} sent an empty functionCall with no call streaming",
        )

    def _interleaved(
        self, cand: Candidate, fc: dict[str, Any], sig: str | None, out: list[Event]
    ) -> None:
        open_call = cand.call
        self._acc.conflict(
            f"candidate {cand.state.index} sent the whole call {fc.get('name')!r} while "
            f"call {open_call.name if open_call else None!r} was still streaming"
        )
        self._whole(cand, fc, sig, out)

    def _restart(
        self, cand: Candidate, fc: dict[str, Any], sig: str | None, out: list[Event]
    ) -> None:
        call = cand.call
        if call is not None and call.name == fc.get("name"):
            self._fragments(cand, fc, out)  # the identity repeated: a no-op
            return
        self._acc.conflict(
            f"candidate {cand.state.index} started call {fc.get('name')!r} while call "
            f"{call.name if call else None!r} was still streaming"
        )
        self._open(cand, fc, sig, out)
        if cand.call is not None:
            cand.phase = "streaming"

    def _restart_end(
        self, cand: Candidate, fc: dict[str, Any], sig: str | None, out: list[Event]
    ) -> None:
        self._restart(cand, fc, sig, out)
        if cand.call is not None:
            self._end(cand, fc, sig, out)
        cand.phase = "idle"

    def _apply(
        self, cand: Candidate, fc: dict[str, Any], sig: str | None, out: list[Event]
    ) -> None:
        self._fragments(cand, fc, out)

    def _apply_end(
        self, cand: Candidate, fc: dict[str, Any], sig: str | None, out: list[Event]
    ) -> None:
        self._fragments(cand, fc, out)
        self._end(cand, fc, sig, out)

    def _end(self, cand: Candidate, fc: dict[str, Any], sig: str | None, out: list[Event]) -> None:
        call, args = cand.call, cand.args
        cand.call = cand.args = None
        if call is None or args is None:
            return
        if args.ordered:
            tail = args.close()
            if tail:
                self._acc.append_arguments(call, tail, out)
        elif not call.overflowed:
            self._acc.warn(
                "partial_args_unordered",
                f"the streamed arguments of call {call.index} revisited a path: their "
                "deltas stopped; the completed call carries them whole",
            )
            call.parts = [args.text()]
        self._complete(cand, call, out)

    def _abandon(
        self, cand: Candidate, fc: dict[str, Any], sig: str | None, out: list[Event]
    ) -> None:
        call = cand.call
        cand.call = cand.args = None
        if call is not None:
            self._acc.warn(
                "streamed_call_unterminated",
                f"candidate {cand.state.index} finished while call {call.index} "
                f"({call.name}) was still streaming; the call was never completed",
            )

    # --- calls -----------------------------------------------------------

    def _fragments(self, cand: Candidate, fc: dict[str, Any], out: list[Event]) -> None:
        call, args = cand.call, cand.args
        if call is None or args is None:
            return
        acc = self._acc
        call_id = fc.get("id")
        if call_id is not None:
            conflict = call.set_identity("id", call_id if type(call_id) is str else repr(call_id))
            if conflict is not None:
                acc.conflict(conflict)
        if fc.get("args") is not None:
            acc.conflict(f"streamed call {call.index} also sent whole args; they were ignored")
        fragments = fc.get("partialArgs")
        if fragments is None:
            return
        if type(fragments) is not list:
            acc.conflict(f"the partialArgs of call {call.index} are not a list")
            return
        for fragment in fragments:
            if type(fragment) is not dict:
                acc.conflict(f"a partialArgs fragment of call {call.index} is not an object")
                continue
            text, problem = args.apply(fragment)
            if problem is not None:
                acc.conflict(f"call {call.index}: {problem}")
            if text:
                self._acc.append_arguments(call, text, out)
            elif (
                not args.ordered
                and not call.overflowed
                and args.chars > self._calls.max_argument_chars
            ):
                out.append(self._acc.arguments_too_large(call))

    def _new_call(
        self,
        cand: Candidate,
        fc: dict[str, Any],
        sig: str | None,
        args: PartialArgs | None,
        out: list[Event],
    ) -> CallBuffer | None:
        acc = self._acc
        choice = cand.state.index
        if not acc.reserve_block(out):  # max_content_blocks
            return None
        position = len(self._calls.by_choice.get(choice, ()))
        call = self._calls.open((choice, position), choice)
        if call is None:
            if acc.error is None or acc.error.type != "too_many_tool_calls":
                message = f"more than max_tool_calls ({self._calls.max_calls}) tool calls"
                out.append(acc.fail("limit", "too_many_tool_calls", None, message))
            return None
        call_id = fc.get("id")
        if type(call_id) is str and call_id:
            call.set_identity("id", call_id)
        else:
            call.set_identity("id", self._synthetic_id(choice, call.index))
            call.id_source = "synthetic"
        name = fc.get("name")
        if type(name) is str:
            call.name = name
        else:
            acc.conflict(f"the name of call {call.index} is not a string")
        call.type = "function"
        cand.add(_CallPart(call, sig, args))
        out.append(call.started())
        return call

    def _synthetic_id(self, choice: int, index: int) -> str:
        base = self.response_id
        if base is None:
            if self._token is None:
                self._token = secrets.token_hex(6)
            base = self._token
        return f"gemini-{base}-{choice}-{index}"

    def _complete(self, cand: Candidate, call: CallBuffer, out: list[Event]) -> None:
        self._acc.complete_call(call, out)
        if call.executor == "client" and call.state != "collecting":
            if call.id_source == "provider" and call.id:
                cand.waiting_ids.setdefault(call.id, call)
            if call.name:
                cand.waiting_names.setdefault(call.name, deque()).append(call)

    # --- answers: the provider runs a call itself ----------------------------

    def answers(self, cand: Candidate, parts: list[Any]) -> bool:
        """Whether a ``functionResponse`` among ``parts`` answers a waiting call."""
        return any(self._answered(cand, part, take=False) for part in parts)

    def serve(self, cand: Candidate, parts: list[Any], out: list[Event]) -> None:
        """Each waiting call a ``functionResponse`` among ``parts`` answers (by
        its provider ``id`` when the response has one, else by ``name``; each
        call once) was the provider's to run: a server call, never offered,
        said by a second ``ToolCallCompleted``."""
        for part in parts:
            call = self._answered(cand, part, take=True)
            if call is None:
                continue
            call.executor = "server"
            self._acc.cached = None
            out.append(
                ToolCallCompleted(
                    index=call.index,
                    id=call.id,
                    name=call.name,
                    type=call.type or "function",
                    raw_arguments=call.raw_arguments(),
                    arguments=call.arguments,
                    invalid_reason=call.invalid_reason,
                    executor="server",
                    id_source=call.id_source,
                    choice=call.choice,
                )
            )

    def _answered(self, cand: Candidate, part: Any, *, take: bool) -> CallBuffer | None:
        """The waiting call a part answers, if it is such a ``functionResponse``
        (removed from the waiting calls when ``take``); served calls met on the
        way are dropped, so each lookup costs O(1) amortized."""
        response = part.get("functionResponse") if type(part) is dict else None
        if type(response) is not dict:
            return None
        call_id, name = response.get("id"), response.get("name")
        if type(call_id) is str and call_id:
            found = cand.waiting_ids.get(call_id)
            if found is None or found.executor != "client":
                return None
            if take:
                del cand.waiting_ids[call_id]
            return found
        queue = cand.waiting_names.get(name) if type(name) is str else None
        while queue and queue[0].executor != "client":
            queue.popleft()
        if not queue:
            return None
        return queue.popleft() if take else queue[0]
