"""The follow-up kind: the client answers the streamed call with a failed tool result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ....errors import StreamwireError
from ....result import StreamResult
from ..toolturn import check_tool_result, follow_up_request
from .base import Kind

__all__ = ["FollowUp"]


@dataclass(frozen=True)
class FollowUp(Kind):
    """The client sends the call it got back with a failed result; the mock
    logs what the upstream saw of it (``toolturn.check_tool_result``) and,
    when the result answers its call, streams ``answer``; the
    ``tool_results`` layer judges the turn."""

    answer: tuple[str, ...] = ()

    layers = frozenset({"tool_results"})

    def salted(self, salt: Callable[[tuple[str, ...]], tuple[str, ...]]) -> Kind:
        return replace(self, answer=salt(self.answer))

    def tool_turn(self, upstream: str, body: Any, case: Any, entry: dict[str, Any]) -> bool:
        check = entry["tool_result"] = check_tool_result(upstream, body, case)
        return bool(check and check["correlated"])

    def next_request(
        self, client: str, body: dict[str, Any], result: StreamResult | None
    ) -> dict[str, Any] | None:
        if result is None or not result.tool_calls:
            return None
        try:
            return follow_up_request(client, body, result)
        except (ValueError, StreamwireError):  # the calls received cannot be answered
            return None
