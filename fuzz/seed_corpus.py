#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/<target>/ from the test vectors.

Each seed is a 4-byte run configuration (see fuzz/src/lib.rs, `Config`)
followed by one vector's bytes: fed whole, and again in small random chunks.
Only vectors of at most 4 KiB are used, to keep the committed seeds small.
Usage: python3 fuzz/seed_corpus.py [SSE_CASES_JSON]
"""

import base64
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ES = ROOT / "fixtures" / "eventstream"
CORPUS = ROOT / "fuzz" / "corpus"
LIMIT = 4096


def eventstream_vectors():
    for polarity in ("positive", "negative"):
        for f in sorted((ES / "aws-sdk-go" / "encoded" / polarity).iterdir()):
            yield f"aws-{f.name}", f.read_bytes()
    for f in sorted((ES / "smithy-rs").iterdir()):
        if f.name not in ("LICENSE", "NOTICE"):
            yield f"smithy-{f.name}", f.read_bytes()
    for v in json.loads((ES / "generated.json").read_text()):
        yield f"gen-{v['name']}", base64.b64decode(v["message_b64"])


def sse_vectors(path):
    for v in json.loads(Path(path).read_text()):
        yield v["name"], base64.b64decode(v["input_b64"])


def write(target, name, config, body):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{name}-{config.hex()}").write_bytes(config + body)


def main():
    sse_cases = sys.argv[1] if len(sys.argv) > 1 else ROOT / "fixtures" / "sse" / "cases.json"
    for i, (name, body) in enumerate(eventstream_vectors()):
        if len(body) > LIMIT:
            continue
        seed = (i * 7919 % 65536).to_bytes(2, "big")
        # strict whole; lenient in chunks of up to 7 bytes.
        write("eventstream_raw", name, b"\x00\x00\x00\x00", body)
        write("eventstream_raw", name, b"\x01\x07" + seed, body)
        # repaired: as is; and lenient, lengths repaired, 4 KiB cap, in chunks.
        write("eventstream_repaired", name, b"\x00\x00\x00\x00", body)
        write("eventstream_repaired", name, b"\x1d\x83" + seed, body)
    for i, (name, body) in enumerate(sse_vectors(sse_cases)):
        if len(body) > LIMIT:
            continue
        seed = (i * 7919 % 65536).to_bytes(2, "big")
        write("sse", name, b"\x00\x00\x00\x00", body)
        write("sse", name, b"\x02\x03" + seed, body)


if __name__ == "__main__":
    main()
