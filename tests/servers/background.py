"""The mock upstream in an event loop of its own thread.

``MockInBackground()`` starts a ``MockUpstream`` in a loop that runs in a
daemon thread, so that a test's own blocking reads (ground truth without the
kit) and the kit's runs (``run(coroutine)``) go on beside it; ``close()``.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from streamwire.kit.upstream.mock import MockUpstream

__all__ = ["MockInBackground"]


class MockInBackground:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.mock = MockUpstream()
        self.loop.run_until_complete(self.mock.__aenter__())
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.mock.url.rpartition(":")[2])

    def run(self, coroutine: Any) -> Any:
        """Runs ``coroutine`` in the mock's loop; its result (300 s at most)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(300)

    def close(self) -> None:
        self.run(self.mock.__aexit__(None, None, None))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()
