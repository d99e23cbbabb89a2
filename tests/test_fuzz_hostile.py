"""The hostile-upstream fuzz (``hostile_fuzz.py``), for a bounded time.

The systematic pass (every field of every protocol's fixtures confused with
each value of ``SYSTEMATIC``, and deleted) runs whole; the random pass
(stacked mutations, random chunkings, cancels, ``sw.translate``) fills the
rest of ``STREAMWIRE_FUZZ_SECONDS`` (default 45, the whole test's budget;
``make fuzz-python`` runs it longer). The random seed is
``STREAMWIRE_FUZZ_SEED`` (default: fixed, so CI is reproducible); a failure
names its seed and case (``python tests/hostile_fuzz.py --seed S --case N``
replays it). It asserts on no clock (a busy machine runs fewer random
cases in the budget, never fewer systematic ones), so it runs with the
untimed tests, beside the others.
"""

from __future__ import annotations

import os
import time

from hostile_fuzz import fuzz, systematic

BUDGET = float(os.environ.get("STREAMWIRE_FUZZ_SECONDS", "45"))
SEED = int(os.environ.get("STREAMWIRE_FUZZ_SEED", "20261201"))
#: The random pass always runs at least this long, even on a slow machine.
MIN_RANDOM_SECONDS = 10.0


def test_every_field_confused_and_random_mutations_never_break_an_adapter() -> None:
    start = time.monotonic()
    count, failures = systematic()
    assert count > 10_000, count  # every field of every protocol, not a handful
    assert not failures, f"{len(failures)} of {count} systematic cases failed:\n" + "\n".join(
        failures[:5]
    )
    remaining = max(MIN_RANDOM_SECONDS, BUDGET - (time.monotonic() - start))
    ran, random_failures = fuzz(remaining, SEED)
    assert ran > 100, ran
    assert not random_failures, random_failures[0]
