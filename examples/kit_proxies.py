"""The acceptance kit through plain reverse proxies: nginx, caddy, haproxy and nghttpx, as deployed.

    python examples/kit_proxies.py [--out DIR] [--docs] [--strict] [check options]

Starts ``streamwire mock-upstream``, then nine reverse proxies on loopback in
front of it, each its own process with a generated config in a temp dir
(the Debian packages; ``.ci/run`` installs them when missing):

* ``nginx``: nginx's defaults (``proxy_pass`` alone: HTTP/1.0 to the
  upstream, ``proxy_buffering on``);
* ``nginx-tuned``: what a streaming API wants (``proxy_http_version 1.1``,
  ``proxy_buffering off``, ``proxy_cache off``, a long ``proxy_read_timeout``);
* ``nginx-gzip``: nginx's defaults with ``gzip on; gzip_types
  text/event-stream;``, the configuration the field reports most ("curl
  streams fine, browsers do not");
* ``nginx-gzip-fixed``: ``gzip on`` with nginx's default ``gzip_types``
  (``text/html``): event streams left out of compression;
* ``caddy``: ``reverse_proxy`` with caddy's defaults;
* ``caddy-encode``: the same with ``encode gzip``, which compresses the
  answers it deems long enough, event streams included;
* ``haproxy``: ``mode http`` with haproxy's defaults;
* ``haproxy-no-delay``: the same with ``option http-no-delay``;
* ``nghttpx``: an HTTPS front (HTTP/2 and HTTP/1.1 by ALPN) with a
  certificate of a CA the example makes (openssl), given to the check as
  ``--cacert``; the mock behind it over HTTP/1.1.

Then one ``streamwire check`` on ten paths to the mock (``--path``): the
mock itself (``direct``, the reference) and the nine proxies, labelled as
above, every client protocol the mock speaks (a plain proxy passes each
through to the same endpoint), every case and delivery unless told
otherwise; the report compares each proxy's cells with the direct ones
(what that hop changed: times, events, reads, verdicts). Writes
``check.json``, ``check.html`` and ``check.md`` into ``--out`` (default
``build/kit/proxies``); with ``--docs`` also the matrix into
docs/kit/examples-proxies.md (or ``--docs-page``), between its markers.

``--front URL`` puts the proxies in front of another server instead (a
gateway: ``.ci/litellm.sh --paths`` puts them in front of LiteLLM), which
is then the reference path, labelled ``--label`` (default ``direct``);
``--proxies`` picks some of the nine; the check's ``--mock``, ``--client``
and the rest are then the caller's, and the exit status is the check's.

What each verdict means is docs/kit/examples-proxies.md. The exit status:
1 when the verdicts that no clock decides are not exactly the measured ones
(``EXPECTED``: nginx's defaults pile up a slow reader's answer, caddy ends a
stream the upstream broke off as if it were whole), or a cell is
inconclusive; the clock-decided ones (haproxy's defaults delay every write
by up to ~200 ms; nginx holds what it gzips for the clients that accept it,
``compression_buffered`` on the ``http1-gzip`` transport) are printed beside
what was expected, and fail the run only with ``--strict``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kit_processes import free_port, make_ca, processes, wait_listening

ROOT = Path(__file__).resolve().parent.parent

#: The verdicts each route gets, measured (docs/kit/examples-proxies.md), and of
#: them those that a clock decides (reported, gated only with --strict).
EXPECTED: dict[str, set[str]] = {
    "direct": set(),
    "nginx": {"slow_reader_buffered", "idle_timeout"},
    "nginx-tuned": set(),
    "nginx-gzip": {
        "slow_reader_buffered",
        "compression_buffered",
        "stream_delayed",
        "idle_timeout",
    },
    "nginx-gzip-fixed": {"slow_reader_buffered", "idle_timeout"},
    "caddy": {"error_masked"},
    "caddy-encode": {"error_masked", "stream_delayed", "compression_buffered"},
    "haproxy": {"stream_delayed"},
    "haproxy-no-delay": set(),
    "nghttpx": {"idle_timeout", "response_dropped"},
}
TIMED = {"stream_delayed", "not_streaming", "arguments_buffered", "compression_buffered"}
#: The proxies the check reaches over https.
HTTPS = {"nghttpx"}
#: What must have run for each expected firm verdict (a run without it
#: expects none): its case, and the client protocols it shows on (None: any).
#: nghttpx drops the client's connection without a response when the upstream
#: resets an EventStream answer mid-way (it relays an SSE one's cut).
CAUSE: dict[str, tuple[str, set[str] | None]] = {
    "slow_reader_buffered": ("slow-reader", None),
    "error_masked": ("retry-after-text", None),
    "response_dropped": ("retry-after-text", {"bedrock-converse", "bedrock-invoke"}),
    "idle_timeout": ("silence-start", None),
}
#: nginx's ``proxy_read_timeout`` and nghttpx's ``backend-read-timeout``, by
#: default: a run's idle-timeout probes (``--silence``, each route's first
#: client) find them when they are at least this long.
IDLE_TIMEOUT = 60.0

_NGINX = """\
daemon off;
master_process off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://127.0.0.1:{upstream};{tuning}
        }}
    }}
}}
"""
_NGINX_TUNED = """
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_cache off;
            proxy_read_timeout 300s;"""
_NGINX_GZIP = """
            gzip on;
            gzip_types text/event-stream;"""
_CADDY = """\
{{
    admin off
    auto_https off
    storage file_system {tmp}/caddy
}}
http://127.0.0.1:{port} {{{tuning}
    reverse_proxy 127.0.0.1:{upstream}
}}
"""
_HAPROXY = """\
global
    log stdout format raw local0 emerg
defaults
    mode http
    timeout connect 5s
    timeout client 120s
    timeout server 120s
frontend kit
    bind 127.0.0.1:{port}
    default_backend mock
backend mock{tuning}
    server mock 127.0.0.1:{upstream}
"""


def _binary(name: str) -> str:
    found = shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.access(p, os.X_OK)), None
    )
    if found is None:
        raise SystemExit(f"{name} is not installed (apt-get install {name}; .ci/run does)")
    return found


def _proxies(tmp: Path, upstream: int) -> dict[str, Callable[[int], list[str]]]:
    def nginx(tuning: str, name: str) -> Callable[[int], list[str]]:
        def cmd(port: int) -> list[str]:
            folder = tmp / name
            folder.mkdir()
            conf = folder / "nginx.conf"
            conf.write_text(_NGINX.format(tmp=folder, port=port, upstream=upstream, tuning=tuning))
            return [_binary("nginx"), "-p", str(folder), "-c", str(conf), "-e", "stderr"]

        return cmd

    def caddy(tuning: str, name: str) -> Callable[[int], list[str]]:
        def cmd(port: int) -> list[str]:
            conf = tmp / f"{name}.Caddyfile"
            folder = tmp / name
            conf.write_text(_CADDY.format(tmp=folder, port=port, upstream=upstream, tuning=tuning))
            return [_binary("caddy"), "run", "--config", str(conf), "--adapter", "caddyfile"]

        return cmd

    def nghttpx(port: int) -> list[str]:
        ca = tmp / "ca"
        ca.mkdir(exist_ok=True)
        files = make_ca(ca)
        if files is None:
            raise SystemExit("openssl is not installed: nghttpx's certificate cannot be made")
        return [
            _binary("nghttpx"), "--conf=/dev/null", f"--frontend=127.0.0.1,{port}",
            f"--backend=127.0.0.1,{upstream}", "--workers=1", "--no-ocsp",
            f"--errorlog-file={tmp / 'nghttpx.log'}", "--accesslog-file=/dev/null",
            str(files["key"]), str(files["cert"]),
        ]  # fmt: skip

    def haproxy(tuning: str, name: str) -> Callable[[int], list[str]]:
        def cmd(port: int) -> list[str]:
            conf = tmp / f"{name}.cfg"
            conf.write_text(_HAPROXY.format(port=port, upstream=upstream, tuning=tuning))
            return [_binary("haproxy"), "-f", str(conf), "-db"]

        return cmd

    return {
        "nginx": nginx("", "nginx"),
        "nginx-tuned": nginx(_NGINX_TUNED, "nginx-tuned"),
        "nginx-gzip": nginx(_NGINX_GZIP, "nginx-gzip"),
        "nginx-gzip-fixed": nginx("\n            gzip on;", "nginx-gzip-fixed"),
        "caddy": caddy("", "caddy"),
        "caddy-encode": caddy("\n    encode gzip", "caddy-encode"),
        "haproxy": haproxy("", "haproxy"),
        "haproxy-no-delay": haproxy("\n    option http-no-delay", "haproxy-no-delay"),
        "nghttpx": nghttpx,
    }


def _versions(proxies: list[str]) -> dict[str, str]:
    """The first line of each chosen proxy's own version output."""

    def first_line(cmd: list[str]) -> str:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        return ((done.stdout or done.stderr).strip().splitlines() or ["?"])[0]

    commands = {"nginx": "-v", "caddy": "version", "haproxy": "-v", "nghttpx": "--version"}
    servers = {name.split("-")[0] for name in proxies}
    return {s: first_line([_binary(s), commands[s]]) for s in commands if s in servers}


def _caused(verdict: str, cells: list[dict[str, Any]]) -> bool:
    """Whether a cell ran that raises ``verdict`` on a proxy that has it (``CAUSE``)."""
    case, clients = CAUSE.get(verdict, ("", None))
    for cell in cells:
        if cell["case"] != case or (clients is not None and cell["client"] not in clients):
            continue
        if verdict != "idle_timeout" or cell["evidence"].get("silence_s", 0) >= IDLE_TIMEOUT:
            return True
    return False


def _judge(report_path: Path, strict: bool) -> int:
    """0 when the firm verdicts are exactly the expected ones (of the cases run)
    and no cell was inconclusive; the clock-decided ones gate with ``strict``."""
    report = json.loads(report_path.read_text(encoding="utf-8"))
    routes = {c["route"] for c in report["cells"]}
    status = 0
    found: dict[str, set[str]] = {}
    #: Verdicts some case of which a clock alone decided in every cell (the
    #: kit confirmed each by a run alone): reported, gated only with strict.
    timed: dict[str, set[str]] = {}
    for v in report["verdicts"]:
        found.setdefault(v["route"], set()).add(v["name"])
        if v["name"] in TIMED or not set(v["cases"]) - set(v["timed_cases"]):
            timed.setdefault(v["route"], set()).add(v["name"])
    inconclusive = sum(bool(c.get("inconclusive")) for c in report["cells"])
    if inconclusive:
        print(f"FAIL: {inconclusive} cells were cut by the kit's own timeout")
        status = 1
    for route, expected in EXPECTED.items():
        if route not in routes:
            continue  # a proxy this run did not start (--proxies)
        expected = {v for v in expected if v in TIMED or _caused(v, report["cells"])}
        got = found.get(route, set())
        firm_got, firm_want = got - timed.get(route, set()), expected - TIMED
        if firm_got != firm_want:
            print(f"FAIL: {route}: {sorted(firm_got) or 'none'}, expected {sorted(firm_want)}")
            status = 1
        mark = "as measured" if got == expected else f"EXPECTED {sorted(expected) or 'none'}"
        print(f"{route}: {sorted(got) or 'no verdict'} ({mark})")
        if got != expected and strict:
            status = 1
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "build" / "kit" / "proxies"))
    parser.add_argument("--docs", action="store_true", help="also update the worked example")
    parser.add_argument(
        "--docs-page", default="docs/kit/examples-proxies.md", help="the worked example's page"
    )
    parser.add_argument("--strict", action="store_true", help="clock-decided verdicts gate too")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--front", metavar="URL", help="proxies in front of this, not a mock")
    parser.add_argument("--label", default="direct", help="the reference path's name")
    parser.add_argument(
        "--proxies", help="some of: " + ", ".join(k for k in EXPECTED if k != "direct")
    )
    args, check_args = parser.parse_known_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="streamwire-proxies-") as tmp, processes() as procs:
        reference = args.front or procs.mock(args.python)
        upstream = int(reference.rstrip("/").rpartition(":")[2])
        routes = [(args.label, reference)]
        proxies = _proxies(Path(tmp), upstream)
        chosen = args.proxies.split(",") if args.proxies else list(proxies)
        if unknown := set(chosen) - proxies.keys():
            raise SystemExit(f"no such proxy: {', '.join(sorted(unknown))}")
        for name in chosen:
            command = proxies[name]
            port = free_port()
            proc = procs.start(command(port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_listening(port, proc, name)
            scheme = "https" if name in HTTPS else "http"
            routes.append((name, f"{scheme}://127.0.0.1:{port}"))
        # The CA of the https fronts' certificates (make_ca's, in the temp dir).
        trust = ["--cacert", str(Path(tmp) / "ca" / "ca.pem")] if HTTPS & set(chosen) else []
        started = time.monotonic()
        check = [
            args.python,
            "-m",
            "streamwire.cli",
            "check",
            *(a for name, url in routes for a in ("--path", f"{name}={url}")),
            *(
                ()
                if args.front
                else (
                    "--mock",
                    reference,
                    "--client",
                    "all",
                    # A reverse proxy passes the client's key on to the provider by design.
                    "--key-passthrough",
                    # The worked example's matrix is streamed cells only (docs/kit/examples.md).
                    "--no-unary",
                    "--concurrency",
                    "16",
                )
            ),
            "--json",
            str(out / "check.json"),
            "--html",
            str(out / "check.html"),
            "--markdown",
            str(out / "check.md"),
            "--title",
            "streamwire check: nginx, caddy, haproxy and nghttpx as deployed",
            *trust,
            *check_args,
        ]
        done = subprocess.run(check, check=False)
        print(f"kit through the proxies: {time.monotonic() - started:.1f} s", flush=True)
        versions = _versions(chosen)
        if "--gateway" in check_args[:-1]:  # the server the proxies front, as the check names it
            versions = {"gateway": check_args[check_args.index("--gateway") + 1], **versions}
        print("; ".join(versions.values()))
    status = done.returncode if args.front else _judge(out / "check.json", args.strict)
    if args.docs:
        _write_docs(out / "check.md", versions, ROOT / args.docs_page)
    return status


def _write_docs(markdown: Path, versions: dict[str, str], page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    start, end = "<!-- matrix: examples/kit_proxies.py --docs -->", "<!-- end of matrix -->"
    head, _, rest = text.partition(start)
    _, _, tail = rest.partition(end)
    run = markdown.read_text(encoding="utf-8").split("\n", 2)[2]  # without its title
    stamp = "; ".join(versions.values())
    page.write_text(f"{head}{start}\n\nVersions: {stamp}.\n\n{run}\n{end}{tail}", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
