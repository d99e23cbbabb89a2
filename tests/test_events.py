"""The unified event classes: frozen, slotted, keyword-only, documented, one grammar.

Also checks that the fast internal constructors (``events.new_*``) build
exactly what the public keyword-only constructors build, field for field.
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
import re
import sys
from typing import Any

import pytest

import streamwire as sw
from streamwire import events
from streamwire._core import Builder, ShapeMatcher, TextTaker

EVENT_CLASSES = [
    cls
    for cls in vars(events).values()
    if isinstance(cls, type) and issubclass(cls, sw.Event) and cls is not sw.Event
]

SAMPLES: dict[type[sw.Event], dict[str, Any]] = {
    sw.MessageStarted: {"message_id": "m", "model": "gpt", "role": "assistant", "choice": 1},
    sw.TextDelta: {"text": "hi", "choice": 2},
    sw.ReasoningDelta: {
        "text": "t",
        "signature": "sig",
        "redacted": None,
        "kind": "summary",
        "choice": 0,
    },
    sw.RefusalDelta: {"text": "no", "choice": 0},
    sw.ToolCallStarted: {"index": 0, "id": "c", "name": "f"},
    sw.ToolCallArgumentsDelta: {"index": 0, "id": "c", "delta": "{"},
    sw.ToolCallCompleted: {
        "index": 0,
        "id": "c",
        "name": "f",
        "type": "function",
        "raw_arguments": "{}",
        "arguments": {},
        "invalid_reason": None,
    },
    sw.UsageReported: {"usage": sw.Usage(input_tokens=1, output_tokens=2, final=True)},
    sw.MessageCompleted: {
        "status": "completed",
        "stop_reason": "stop",
        "provider_stop_reason": "stop",
    },
    sw.ErrorReceived: {
        "phase": "provider",
        "type": "server_error",
        "code": 500,
        "message": "boom",
        "retryable": True,
    },
    sw.UnknownEvent: {"provider_type": "ping", "raw": "{}"},
}


def test_every_event_class_is_exported_and_sampled() -> None:
    assert set(EVENT_CLASSES) == set(SAMPLES)
    for cls in EVENT_CLASSES:
        assert getattr(sw, cls.__name__) is cls
        assert cls.__name__ in sw.__all__


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda c: c.__name__)
def test_frozen_slotted_keyword_only(cls: type[sw.Event]) -> None:
    event = cls(**SAMPLES[cls])
    assert not hasattr(event, "__dict__"), "slotted: no per-instance dict"
    first = dataclasses.fields(event)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(event, first, None)
    with pytest.raises(TypeError):
        cls(*SAMPLES[cls].values())  # positional arguments are refused
    assert event == cls(**SAMPLES[cls])
    assert hash(event) == hash(cls(**SAMPLES[cls]))


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda c: c.__name__)
def test_naming_grammar(cls: type[sw.Event]) -> None:
    # Lifecycle facts in past tense, increments end in Delta.
    name = cls.__name__
    words = re.findall(r"[A-Z][a-z]+", name)
    assert name.endswith("Delta") or words[-1].endswith("ed") or name == "UnknownEvent", name


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda c: c.__name__)
def test_every_field_documented(cls: type[sw.Event]) -> None:
    source = inspect.getsource(cls)
    assert cls.__doc__
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        pattern = rf"#: [^\n]+\n(?:    #: [^\n]+\n)*    {field.name}: "
        assert re.search(pattern, source), f"{cls.__name__}.{field.name} has no #: comment"


def test_fast_constructors_match_the_public_ones() -> None:
    pairs = [
        (events.new_text_delta("abc", 3), sw.TextDelta(text="abc", choice=3)),
        (events.new_refusal_delta("no", 1), sw.RefusalDelta(text="no", choice=1)),
        (
            events.new_reasoning_delta("r", "s", "x", "summary", 2),
            sw.ReasoningDelta(text="r", signature="s", redacted="x", kind="summary", choice=2),
        ),
        (
            events.new_arguments_delta(4, "id", '{"a"', 1),
            sw.ToolCallArgumentsDelta(index=4, id="id", delta='{"a"', choice=1),
        ),
    ]
    for fast, regular in pairs:
        assert type(fast) is type(regular)
        assert fast == regular
        for field in dataclasses.fields(regular):  # type: ignore[arg-type]
            assert getattr(fast, field.name) == getattr(regular, field.name)
        first = dataclasses.fields(fast)[0].name  # type: ignore[arg-type]
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(fast, first, "x")


def test_bulk_constructors_match_the_public_ones() -> None:
    texts = ["a", "数🙂", ""]
    built = events.new_text_deltas(texts, 2)
    assert built == [sw.TextDelta(text=t, choice=2) for t in texts]
    args = events.new_arguments_deltas(['{"a"', ": 1}"], 3, "toolu_1", 0)
    assert args == [
        sw.ToolCallArgumentsDelta(index=3, id="toolu_1", delta=d, choice=0)
        for d in ('{"a"', ": 1}")
    ]
    for fast in [*built, *args]:
        regular = type(fast)(**{f.name: getattr(fast, f.name) for f in dataclasses.fields(fast)})  # type: ignore[arg-type]
        assert fast == regular and hash(fast) == hash(regular) and repr(fast) == repr(regular)
        with pytest.raises(dataclasses.FrozenInstanceError):
            fast.choice = 9  # type: ignore[misc]
    assert events.new_text_deltas([], 0) == []


def test_the_reasoning_builder_builds_what_the_constructor_builds() -> None:
    built = events.new_reasoning_deltas(["a", "数据"], None, None, "text", 0)
    assert built == [
        sw.ReasoningDelta(text=t, signature=None, redacted=None, kind="text", choice=0)
        for t in ("a", "数据")
    ]


def test_a_text_taker_builds_its_events_with_the_fixed_values_it_is_armed_with() -> None:
    shapes = ShapeMatcher([("m", {"i": "$int", "t": "$str"})])
    taker = TextTaker(0, text=events.reasoning_delta_builder)
    texts: list[str] = []
    with pytest.raises(TypeError, match="fixed values"):
        taker.arm(1, texts)  # the reasoning builder takes four, not the index alone
    taker.arm(1, texts, (None, None, "text", 0))
    out: list[Any] = []
    left = sw.SseDecoder().feed_matched(
        b'event: m\ndata: {"i":1,"t":"x"}\n\nevent: m\ndata: {"i":1,"t":""}\n\n'
        b'event: m\ndata: {"i":2,"t":"y"}\n\n',
        shapes,
        taker,
        out,
    )
    assert texts == ["x"] and taker.sunk == 2
    assert out == [
        sw.ReasoningDelta(text="x", signature=None, redacted=None, kind="text", choice=0)
    ]
    assert len(left) == 1  # another index: not taken, returned as a match
    with pytest.raises(TypeError, match="fixed values"):
        taker.arm(1, texts, (None,))


def test_a_text_taker_appends_each_text_to_the_second_list_it_is_armed_with() -> None:
    shapes = ShapeMatcher([("m", {"i": "$int", "t": "$str"})])
    taker = TextTaker(0, text=events.text_delta_builder)
    texts, block = ["before"], ["own"]
    out: list[Any] = []
    taker.arm(1, texts, None, block)
    wire = b'event: m\ndata: {"i":1,"t":"x"}\n\nevent: m\ndata: {"i":1,"t":""}\n\n'
    wire += b'event: m\ndata: {"i":1,"t":"y"}\n\nevent: m\ndata: {"i":2,"t":"z"}\n\n'
    left = sw.SseDecoder().feed_matched(wire, shapes, taker, out)
    assert texts == ["before", "x", "y"] and block == ["own", "x", "y"]
    assert texts[1] is block[1]  # one str, in both lists
    assert out == [sw.TextDelta(text="x", choice=1), sw.TextDelta(text="y", choice=1)]
    assert len(left) == 1
    # Armed again without it: the second list takes nothing more.
    taker.arm(2, texts)
    sw.SseDecoder().feed_matched(b'event: m\ndata: {"i":2,"t":"w"}\n\n', shapes, taker, out)
    assert texts[-1] == "w" and block == ["own", "x", "y"]


def test_the_builder_refuses_what_it_cannot_build_like_object_new() -> None:
    class Custom:
        def __new__(cls) -> Custom:
            return super().__new__(cls)

    with pytest.raises(TypeError, match=r"object\.__new__"):
        Builder(Custom, "x")

    class Abstract(abc.ABC):
        __slots__ = ("x",)

        @abc.abstractmethod
        def f(self) -> None: ...

    with pytest.raises(TypeError, match="abstract"):
        Builder(Abstract, "x")
    builder = Builder(sw.TextDelta, "text", "choice")
    with pytest.raises(TypeError, match="fixed values"):
        builder.build(["a"])
    with pytest.raises(TypeError, match="fixed values"):
        builder.one("a", 0, 1)
    assert builder.one("a", 2) == sw.TextDelta(text="a", choice=2)
    with pytest.raises(AttributeError):
        Builder(sw.TextDelta, "nope").build(["a"])


def test_the_builder_sets_slots_directly_only_where_setattr_would_reach_them() -> None:
    class Slotted:
        __slots__ = ("a", "b")

    class Sub(Slotted):
        __slots__ = ("c",)

    class Plain:  # no slots: an instance __dict__
        pass

    class Other:
        __slots__ = ("x",)

    class Borrowed:
        __slots__ = ("y",)

    Borrowed.x = Other.x  # type: ignore[attr-defined]  # a descriptor of another layout

    value = object()
    before = sys.getrefcount(value)
    built = Builder(Sub, "c", "a", "b").build([value, value], 1, value)
    assert [(o.c, o.a, o.b) for o in built] == [(value, 1, value)] * 2
    assert sys.getrefcount(value) == before + 4
    del built
    assert sys.getrefcount(value) == before
    plain = Builder(Plain, "p").one(value)
    assert plain.__dict__ == {"p": value}
    with pytest.raises(TypeError, match="doesn't apply"):
        Builder(Borrowed, "x").one(value)


def test_repr_truncates_long_text() -> None:
    event = sw.TextDelta(text="x" * 10_000)
    text = repr(event)
    assert len(text) < 200
    assert "chars" in text and text.startswith("TextDelta(text=")
    assert repr(sw.TextDelta(text="short")) == "TextDelta(text='short', choice=0)"


def test_as_dict() -> None:
    usage = sw.Usage(input_tokens=3, raw={"prompt_tokens": 3})
    assert sw.UsageReported(usage=usage).as_dict() == {
        "event": "UsageReported",
        "usage": {
            "input_tokens": 3,
            "output_tokens": None,
            "total_tokens": None,
            "cache_read_tokens": None,
            "cache_creation_tokens": None,
            "reasoning_tokens": None,
            "final": False,
            "raw": {"prompt_tokens": 3},
        },
    }
    error = sw.ErrorReceived(phase="framing", type="x", code=None, message="m", retryable=False)
    assert error.as_dict()["event"] == "ErrorReceived"
    assert error.as_dict()["type"] == "x"
