"""Copies the recorded Anthropic streams into ``fixtures/providers/anthropic/`` with manifests.

Run ``python tests/make_anthropic_vectors.py VECTORS`` from the repository
root, VECTORS being the vector set's ``providers`` folder (the one with
``SOURCES.md`` and ``expected.json``). Each raw file is copied verbatim; its
manifest's provenance comes from ``SOURCES.md`` and its facts from
``expected.json`` (derived there with the anthropic SDK's ``accumulate_event``),
restated by docs/design.md's rules where they decide otherwise, with a note saying
so. Signatures and redacted data, of which ``expected.json`` keeps only the
lengths, are read from the raw events themselves with a plain line parser
(and checked against those lengths), never from streamwire.
"""

# ruff: noqa: E501 (fixture data: long notes)

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "providers" / "anthropic"
STOP = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
    "pause_turn": "pause",
}


def section(sources: str, name: str) -> str:
    """The SOURCES.md section of one file."""
    start = sources.index(f"### `anthropic/{name}`")
    end = sources.find("\n### ", start + 5)
    end2 = sources.find("\n## ", start + 5)
    ends = [e for e in (end, end2) if e > 0]
    return sources[start : min(ends) if ends else len(sources)]


def raw_events(data: bytes) -> list[dict[str, Any]]:
    """Every data line that is a JSON object (independent of streamwire)."""
    out = []
    for line in data.decode().split("\n"):
        if line.startswith("data:"):
            try:
                obj = json.loads(line[5:])
            except ValueError:
                continue
            out.append(obj)
    return out


def main(src: Path) -> None:
    """Copies every anthropic vector of ``src`` and writes its manifest."""
    OUT.mkdir(parents=True, exist_ok=True)
    expected = json.loads((src / "expected.json").read_text())
    sources = (src / "SOURCES.md").read_text()
    for key, facts in expected.items():
        if key.startswith("anthropic/"):
            write_case(src, sources, expected["_meta"]["sdk_versions"]["anthropic"], key, facts)


def write_case(src: Path, sources: str, sdk: str, key: str, facts: dict[str, Any]) -> None:
    """Copies one vector and writes its manifest."""
    name = key.split("/", 1)[1]
    case = name.rsplit(".", 1)[0]
    sec = section(sources, name)
    m = re.search(r"- source: `([^`]+)` — `([^`]+)` @ `([0-9a-f]+)` — license (\S+)", sec)
    repo, path, commit, lic = m.groups()
    transform = re.search(r"- transform: (.+)", sec).group(1).strip()
    exercises = re.search(r"- exercises: (.+)", sec).group(1).strip()
    data = (src / key).read_bytes()
    shutil.copyfile(src / key, OUT / name)
    events = raw_events(data)
    signatures = [
        e["delta"]["signature"]
        for e in events
        if e.get("type") == "content_block_delta" and e["delta"].get("type") == "signature_delta"
    ]
    redacted = [
        e["content_block"]["data"]
        for e in events
        if e.get("type") == "content_block_start"
        and e["content_block"]["type"] == "redacted_thinking"
    ]
    result_blocks = {
        e["index"]: e["content_block"]
        for e in events
        if e.get("type") == "content_block_start"
        and e["content_block"]["type"].endswith("_tool_result")
    }
    citations = {}
    for e in events:
        if e.get("type") == "content_block_delta" and e["delta"].get("type") == "citations_delta":
            citations.setdefault(e["index"], []).append(e["delta"]["citation"])

    ended = facts["terminal"] == "message_stop"
    raw_stop = facts["stop_reason"]
    stop = STOP.get(raw_stop, "other") if raw_stop else None
    if not ended:
        status = "incomplete"
    elif stop == "length":
        status = "truncated"
    else:
        status = "completed"
    notes = []
    never_stopped = set(facts.get("blocks_without_content_block_stop", []))

    text = "".join(b["text"] for b in facts["content"] if b["type"] == "text")
    thinking = "".join(b["thinking"] for b in facts["content"] if b["type"] == "thinking")
    calls = []
    content = []
    sig_iter = iter(signatures)
    red_iter = iter(redacted)
    for b in facts["content"]:
        t = b["type"]
        if t == "text":
            block = {"type": "text", "text": b["text"]}
            if b.get("citations"):
                block["citations"] = citations[b["index"]]
                assert len(block["citations"]) == b["citations"]
        elif t == "thinking":
            block = {"type": "thinking", "thinking": b["thinking"], "signature": next(sig_iter)}
            assert len(block["signature"]) == b["signature_len"]
        elif t == "redacted_thinking":
            block = {"type": "redacted_thinking", "data": next(red_iter)}
            assert len(block["data"]) == b["data_len"]
        elif t in ("tool_use", "server_tool_use"):
            complete = b["index"] not in never_stopped
            arguments = b["input"] if complete else None
            if complete and b["partial_json_concat"] == "":
                arguments = {}  # docs/design.md: an empty buffer on a completed call is {}
            server = t == "server_tool_use"
            executable = (
                (not server) and status == "completed" and complete and stop != "content_filter"
            )
            calls.append(
                {
                    "id": b["id"],
                    "name": b["name"],
                    "type": t,
                    "raw_arguments": b["partial_json_concat"],
                    "arguments": arguments,
                    "state": "valid" if complete else "rejected",
                    "executable": executable,
                }
            )
            block = {"type": t, "id": b["id"], "name": b["name"], "input": b["input"]}
            if not complete:
                block = None
        else:
            block = dict(result_blocks[b["index"]])
            assert block["tool_use_id"] == b["tool_use_id"]
        if block is not None and b["index"] not in never_stopped:
            content.append(block)
    u = facts["usage"]
    final = ended
    usage = {
        "input_tokens": u.get("input_tokens"),
        "output_tokens": u.get("output_tokens"),
        "total_tokens": None,
        "cache_read_tokens": u.get("cache_read_input_tokens"),
        "cache_creation_tokens": u.get("cache_creation_input_tokens"),
        "final": final,
    }
    client_calls = [c for c in calls if c["type"] == "tool_use"]
    expect = {
        "status": status,
        "stop_reason": stop,
        "provider_stop_reason": raw_stop,
        "text": text,
        "choices": [
            {
                "index": 0,
                "status": status,
                "text": text,
                "reasoning": thinking,
                "refusal": "",
                "stop_reason": stop,
                "provider_stop_reason": raw_stop,
            }
        ],
        "tool_call_count": len(calls),
        "tool_calls": calls,
        "call_ids_unique": True,
        "executable": bool(client_calls) and all(c["executable"] for c in client_calls),
        "usage": usage,
        "error": None,
        "conflicts": [],
        "unknown_events": {},
        "unknown_events_tolerated": True,
        "wire_events": facts["sse_events"],
        "provider_content": content,
        "events_of_type": {
            "MessageStarted": 1,
            "MessageCompleted": 1,
            "ToolCallStarted": len(calls),
        },
    }
    warnings = []
    if not ended:
        warnings.append("partial_event_discarded")
        notes.append(
            "the vector set's expected facts record terminal 'eof (no message_stop)': the stored file ends without "
            "the final blank line, so under WHATWG SSE rules the last event (message_stop) is "
            "never dispatched. By docs/design.md the stream is 'incomplete' (the terminal signal never "
            "arrived), its tool calls are not executable, and the usage (message_delta's figures, "
            "which expected.json calls final) is not final: usage.final needs message_stop. The "
            "discarded bytes are reported as the warning partial_event_discarded."
        )
    if never_stopped:
        if ended:
            warnings.append("block_not_stopped")
        notes.append(
            "the tool_use block never got content_block_stop (max_tokens cut its input): the call "
            "is abandoned (state rejected, arguments null, raw_arguments kept) and the block is not "
            "in provider_content; the vector set's expected facts' partial 'input' is the SDK's partial-JSON parse, "
            "which streamwire never executes or sends back"
        )
        expect["tool_args_complete"] = False
    if any(c["raw_arguments"] == "" for c in calls):
        notes.append(
            "the vector set's expected facts mark the tool input's partial_json as 'not complete JSON' (it is the "
            "empty string): by docs/design.md an empty buffer on a completed call is {}, so the call is "
            "valid with arguments {}"
        )
    expect["warnings"] = warnings
    recording = {
        "model": facts["model"],
        "message_id": facts["message_id"],
        "terminal": facts["terminal"],
        "pings": facts["pings"],
        "derived_with": facts["derived_with"],
    }
    manifest = {
        "format": "streamwire-fixture/1",
        "case": case,
        "raw": name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "provider": "anthropic",
        "protocol": "anthropic",
        "origin": "recorded",
        "provenance": {
            "source_repo": repo,
            "source_path": path,
            "commit": commit,
            "license": lic,
            "transform": transform,
            "copied_from": f"a curated set of recorded provider streams (providers/{key} there), with the upstream source of each file and the facts expected of it (derived with the anthropic SDK {sdk})",
        },
        "recording": recording,
        "exercises": exercises,
        "expect": expect,
        "notes": notes,
    }
    if "compatible endpoint" in exercises:
        notes.append(
            "recorded through an Anthropic-compatible endpoint (SOURCES.md): provider kept as 'anthropic' for the wire format"
        )
    (OUT / f"{case}.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    print(case, status, stop, len(calls), len(content))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
