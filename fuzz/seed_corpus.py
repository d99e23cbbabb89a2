#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/<target>/ from the test vectors.

Each seed is a 4-byte run configuration (see fuzz/src/lib.rs, `Config`)
followed by one vector's bytes: fed whole, and again in small random chunks.
Only vectors of at most 4 KiB are used, to keep the committed seeds small.
Usage: python3 fuzz/seed_corpus.py [SSE_CASES_JSON]
"""

import base64
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ES = ROOT / "fixtures" / "eventstream"
CORPUS = ROOT / "fuzz" / "corpus"
LIMIT = 4096
#: Regression streams of gemini whose lines seed the shape target too.
GEMINI_REGRESSION_SHAPES = (
    "finish-reason-int",
    "finish-reason-int-unknown",
    "server-tool-turn",
    "server-tool-call-ids",
)


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


def shape_payloads():
    """Seeds of target `shape`: (template set, name, payload). The first 4
    JSON payloads of each recorded chat stream (set 0) and content_block_delta
    payloads of each recorded Anthropic stream (set 2), plus a few for the
    generic set 1 and the Bedrock set 3, and lines of each recorded Gemini
    stream (and of a few regression ones) for set 4 (see SHAPE_SETS in
    fuzz/src/lib.rs)."""
    providers = ROOT / "fixtures" / "providers"
    for which, folder, event in ((0, "openai-chat", None), (2, "anthropic", "content_block_delta")):
        for f in sorted((providers / folder).glob("*.sse")):
            picked = 0
            for block in f.read_bytes().replace(b"\r\n", b"\n").split(b"\n\n"):
                lines = block.split(b"\n")
                data = [ln[6:] for ln in lines if ln.startswith(b"data: ")]
                named = [ln[7:] for ln in lines if ln.startswith(b"event: ")]
                if len(data) != 1 or not data[0].startswith(b"{") or len(data[0]) > 2047:
                    continue
                if event is not None and named != [event.encode()]:
                    continue
                yield which, folder, data[0]
                picked += 1
                if picked == 4:
                    break
    generic = [
        '{"b": [1, {"x": [1.5e3, "\\u00e9"]}, null, true, 0, "$x"], "a": []}',
        '{"a": 0, "b": [-9223372036854775808, "s", null, true, 0, "$x"], '
        '"c": {"d": "\\ud83d\\ude42", "e": []}}',
        '{"k\\"q": {}, "": "v", "n": -7, "f": false}',
        ' [1, {"a": "b"}, "c"] ',
    ]
    for payload in generic:
        yield 1, "generic", payload.encode()
    bedrock = [
        '{"contentBlockIndex":0,"delta":{"text":"Hi \\n\\u00e9"},"p":"abcdefgh"}',
        '{"p":[1.5,{"q":null}],"delta":{"text":"\\ud83d\\ude42"},"contentBlockIndex":12}',
        '{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{}"}},"p":"ab"}',
    ]
    for payload in bedrock:
        yield 3, "bedrock", payload.encode()
    # Set 4, Gemini chunks: lines of one stream (the target matches each line
    # through one cache), their usage snapshots long enough to be kept in parts;
    # and of the regression streams whose chunks the fast path must decline
    # (enums sent as numbers, a server-side tool turn).
    regression = ROOT / "fixtures" / "regression" / "gemini"
    gemini = sorted((providers / "gemini").glob("*.sse"))
    gemini += [regression / f"{case}.sse" for case in GEMINI_REGRESSION_SHAPES]
    for f in gemini:
        lines = [
            block[6:]
            for block in f.read_bytes().replace(b"\r\n", b"\n").split(b"\n\n")
            if block.startswith(b"data: {") and len(block) <= 1024
        ]
        if len(lines) >= 2:
            yield 4, "gemini", b"\n".join(lines[:6])


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
    for which, name, payload in shape_payloads():
        digest = hashlib.sha256(payload).hexdigest()[:8]
        write("shape", f"{name}-{digest}", bytes([which]), payload)
    for i, (name, body) in enumerate(json_array_bodies()):
        seed = (i * 7919 % 65536).to_bytes(2, "big")
        write("json_array", name, b"\x00\x00\x00\x00", body)
        write("json_array", name, b"\x02\x05" + seed, body)  # cap 64, chunks of 0..5 bytes


def json_array_bodies():
    """Seeds of target `json_array`: the gemini-json regression arrays (at most
    4 KiB), and a few broken ones."""
    for f in sorted((ROOT / "fixtures" / "regression" / "gemini-json").glob("*.json-array")):
        body = f.read_bytes()
        if len(body) <= LIMIT:
            yield f.stem, body
    broken = [b"[{},]", b"[{}{}]", b'[{"a": "\\\\"}, 1]', b"{} {}", b'[{"a": "\\']
    for k, body in enumerate(broken):
        yield f"broken-{k}", body


if __name__ == "__main__":
    main()
