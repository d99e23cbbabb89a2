"""Instructions an event, counted by callgrind: repeatable where times are not.

On a shared machine a time moves with the neighbours' load; the number of
instructions a piece of work runs does not (``valgrind --tool=callgrind``
counts them, whatever else the machine does). This script runs one step of
the release gate's workloads under callgrind twice, once over the workload
and once over it three times, in fresh processes with ``PYTHONHASHSEED=0``,
and prints the difference divided by the events of the two extra passes:
the instructions an event costs, start-up and imports cancelled out::

    python benches/instructions.py                 # every step
    python benches/instructions.py data floor      # these steps

Steps (the chat workload, ``workloads.py``, in 4 KiB chunks):

* ``framing``: ``SseDecoder.feed`` of every chunk, the events dropped (the
  gate's ``streamwire`` row and the chat pipeline's ``framing``);
* ``data``: the same with every event's ``.data`` read (``streamwire+data``);
* ``floor``: ``str(data, "utf-8")`` of every event's data, already framed
  (``str-floor``);
* ``pipeline``: ``sw.stream("openai-chat")`` fed every chunk, closed, its
  result read (``pipeline/openai-chat``).

``data`` over ``floor`` (inverted) is the ``+data / str floor`` share in
instructions; ``pipeline`` over ``framing`` the chat pipeline's cost of
being correct. Times also depend on what the instructions do (cache misses,
branches): these counts say where a change moved the work, the gate says
what it is worth.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
STEPS = ("framing", "data", "floor", "pipeline")
#: The extra passes over the workload between the two runs.
EXTRA = 2

_RUN = """
import sys
sys.path.insert(0, {benches!r})
import streamwire as sw
import bench_pipeline_chat
from bench_sse import StreamwireDataRead, str_floor
from workloads import CHUNKINGS, chunked

load, chunks = chunked("openai-chat", CHUNKINGS[0])
datas = tuple(d.encode() for d in load.expected)
pipeline = bench_pipeline_chat.load("openai-chat")
reading = StreamwireDataRead()


def framing():
    decoder = sw.SseDecoder()
    for chunk in chunks:
        decoder.feed(chunk)


steps = {{
    "framing": framing,
    "data": lambda: reading.decode(chunks),
    "floor": lambda: str_floor(datas),
    "pipeline": lambda: bench_pipeline_chat.run_streamwire(pipeline.chunks),
}}
assert len(datas) == pipeline.events
step = steps[sys.argv[1]]
for _ in range(int(sys.argv[2])):
    step()
print("events", len(datas))
"""


def count(step: str, passes: int) -> tuple[int, int]:
    """Instructions of a process that runs ``step`` ``passes`` times, and the
    workload's events."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    cmd = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        "-c",
        _RUN.format(benches=str(BENCHES)),
        step,
        str(passes),
    ]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    collected = re.search(r"Collected : (\d+)", done.stderr)
    events = re.search(r"events (\d+)", done.stdout)
    if collected is None or events is None:
        raise RuntimeError(f"no count from callgrind:\n{done.stderr[-2000:]}")
    return int(collected.group(1)), int(events.group(1))


def per_event(step: str) -> float:
    once, events = count(step, 1)
    more, _ = count(step, 1 + EXTRA)
    return (more - once) / (EXTRA * events)


def main(argv: list[str]) -> int:
    steps = argv or list(STEPS)
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        print(f"unknown steps {unknown}; steps: {', '.join(STEPS)}", file=sys.stderr)
        return 2
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    found = {}
    for step in steps:
        found[step] = per_event(step)
        print(f"{step:10s} {found[step]:8,.0f} instructions an event", flush=True)
    if "data" in found and "floor" in found:
        print(f"+data / str floor: {found['floor'] / found['data']:.3f} (in instructions)")
    if "pipeline" in found and "framing" in found:
        print(f"pipeline / framing: {found['pipeline'] / found['framing']:.2f} (in instructions)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
