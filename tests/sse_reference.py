"""A naive, spec-literal reference of Server-Sent Events parsing: the test oracle.

Implements the WHATWG HTML Living Standard, section 9.2.6 "Interpreting an
event stream" (https://html.spec.whatwg.org/multipage/server-sent-events.html
#event-stream-interpretation, text checked 2025-06), for a *whole* byte string.
It is deliberately simple and slow: no incremental state, no caps, no cleverness,
so that it can be read against the spec line by line. The quoted lines are the
spec's own words.

Two conventions of streamwire are added, both outside what the spec defines for
non-browser user agents:

* an event's ``id`` is the last event ID string at dispatch, ``None`` while no
  ``id`` field was ever accepted (the spec's buffer starts as the empty string,
  which streamwire reports only once a stream actually cleared it);
* an event's ``retry`` is the last valid ``retry`` value seen in the event's own
  block (the lines since the previous blank line), else ``None``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["RefEvent", "RefResult", "interpret"]

# "a U+000D CARRIAGE RETURN U+000A LINE FEED (CRLF) character pair, a single
# U+000A LINE FEED (LF) character not preceded by a U+000D CARRIAGE RETURN (CR)
# character, and a single U+000D CARRIAGE RETURN (CR) character not followed by
# a U+000A LINE FEED (LF) character being the ways in which a line can end."
_LINE_END = re.compile(r"\r\n|\n|\r")
_ASCII_DIGITS = frozenset("0123456789")


@dataclass(frozen=True)
class RefEvent:
    """One dispatched event, with the fields ``sw.SseEvent`` exposes."""

    event: str
    data: str
    id: str | None
    retry: int | None


@dataclass
class RefResult:
    """Everything the reference derives from a stream."""

    events: list[RefEvent] = field(default_factory=list)
    #: The event source's "last event ID string" after the stream (None: never set).
    last_event_id: str | None = None
    #: The event stream's "reconnection time" after the stream (None: never set).
    retry: int | None = None


def interpret(raw: bytes) -> RefResult:
    """Parses a complete event stream the way the spec reads it."""
    # "Streams must be decoded using the UTF-8 decode algorithm." Python's
    # "replace" error handler substitutes U+FFFD per maximal subpart, exactly as
    # the Encoding Standard's UTF-8 decoder does.
    text = raw.decode("utf-8", "replace")
    # "The UTF-8 decode algorithm strips one leading UTF-8 Byte Order Mark (BOM),
    # if any." One, not all: a second BOM is content.
    if text.startswith("\ufeff"):
        text = text[1:]

    # "The stream must then be parsed by reading everything line by line". The
    # piece after the last line ending is not a line: "Once the end of the file
    # is reached, any pending data must be discarded. (If the file ends in the
    # middle of an event, before the final empty line, the incomplete event is
    # not dispatched.)"
    lines = _LINE_END.split(text)[:-1]

    result = RefResult()
    # "When a stream is parsed, a data buffer, an event type buffer, and a last
    # event ID buffer must be associated with it. They must be initialized to the
    # empty string." (None stands for the never-set last event ID, see above.)
    data_buffer = ""
    event_type_buffer = ""
    last_event_id_buffer: str | None = None
    block_retry: int | None = None

    # "Lines must be processed, in the order they are received, as follows:"
    for line in lines:
        if line == "":
            # "If the line is empty (a blank line): Dispatch the event, as defined below."
            # "1. Set the last event ID string of the event source to the value of
            # the last event ID buffer. The buffer does not get reset, so the last
            # event ID string of the event source remains set to this value until
            # the next time it is set by the server."
            result.last_event_id = last_event_id_buffer
            retry_of_block, block_retry = block_retry, None
            # "2. If the data buffer is an empty string, set the data buffer and
            # the event type buffer to the empty string and return."
            if data_buffer == "":
                event_type_buffer = ""
                continue
            # "3. If the data buffer's last character is a U+000A LINE FEED (LF)
            # character, then remove the last character from the data buffer."
            data = data_buffer[:-1] if data_buffer.endswith("\n") else data_buffer
            # "5. Initialize event's type attribute to "message", its data
            # attribute to data, ... and its lastEventId attribute to the last
            # event ID string of the event source."
            # "6. If the event type buffer has a value other than the empty string,
            # change the type of the newly created event to equal the value of the
            # event type buffer."
            event_type = event_type_buffer if event_type_buffer != "" else "message"
            result.events.append(RefEvent(event_type, data, result.last_event_id, retry_of_block))
            # "7. Set the data buffer and the event type buffer to the empty string."
            data_buffer = ""
            event_type_buffer = ""
            continue
        if line.startswith(":"):
            # "If the line starts with a U+003A COLON character (:): Ignore the line."
            continue
        if ":" in line:
            # "Collect the characters on the line before the first U+003A COLON
            # character (:), and let field be that string."
            # "Collect the characters on the line after the first U+003A COLON
            # character (:), and let value be that string. If value starts with a
            # U+0020 SPACE character, remove it from value."
            name, value = line.split(":", 1)
            if value.startswith(" "):
                value = value[1:]
        else:
            # "Otherwise, the string is not empty but does not contain a U+003A
            # COLON character (:): Process the field using the steps described
            # below, using the whole line as the field name, and the empty string
            # as the field value."
            name, value = line, ""

        # "Field names must be compared literally, with no case folding performed."
        if name == "event":
            # "Set the event type buffer to the field value."
            event_type_buffer = value
        elif name == "data":
            # "Append the field value to the data buffer, then append a single
            # U+000A LINE FEED (LF) character to the data buffer."
            data_buffer += value + "\n"
        elif name == "id":
            # "If the field value does not contain U+0000 NULL, then set the last
            # event ID buffer to the field value. Otherwise, ignore the field."
            if "\x00" not in value:
                last_event_id_buffer = value
        elif name == "retry":
            # "If the field value consists of only ASCII digits, then interpret the
            # field value as an integer in base ten, and set the event stream's
            # reconnection time to that integer. Otherwise, ignore the field."
            # (An empty value has no digits: ignored. str.isdigit() would also
            # accept non-ASCII digits, hence the explicit set.)
            if value and set(value) <= _ASCII_DIGITS:
                result.retry = block_retry = int(value)
        # "Otherwise: The field is ignored."
    return result
