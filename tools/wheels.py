"""Builds streamwire's wheels and sdist into ``dist/`` and smoke-tests each one.

``make wheels`` runs ``python3 tools/wheels.py all``; CI runs
``tools/wheels.py ci``; ``tools/wheels.py smoke WHEEL...`` only checks
wheels already built. What it builds, with maturin (``--zig``: Zig, from
the ``ziglang`` package on PyPI, is the C toolchain and linker, and links
against glibc 2.17's symbols, so no old-glibc sysroot or container is
needed):

* ``manylinux_2_17`` (manylinux2014) wheels for each CPython 3.10 to 3.13,
  with the fast ``str`` paths of the full C API (README "Building");
* one ``abi3`` wheel (``--features abi3``) for every CPython >= 3.10;
* the same five as ``musllinux_1_2`` wheels, for Alpine-based images: the
  Rust target ``x86_64-unknown-linux-musl`` is added with ``rustup`` when it
  is missing;
* the sdist, which is then built into a wheel itself.

Every extension is stripped (``strip = true`` in pyproject.toml, checked: no ``.symtab``, no
``.debug_*`` section). Each wheel is installed in a fresh virtualenv of
every CPython it claims (a ``cp311`` wheel on 3.11, the ``abi3`` wheel on
each of 3.10 to 3.13), with no Rust on ``PATH`` and a ``HOME`` of its own,
and made to run: ``import streamwire`` from the venv, ``streamwire
--version``, the README's first command (its install step replaced by the
wheel's), and ``streamwire replay`` of the bundled sample. ``auditwheel
show`` confirms the glibc wheels' platform tag from their symbols.

A musllinux wheel needs a musl CPython to run; this tool uses one when
``MUSL_PYTHON`` names it (for the wheels that claim its version), and
otherwise checks what can be checked on a glibc host: that the extension
needs nothing but musl's ``libc.so`` (read from its ELF dynamic section).
A musl CPython can be built on Debian from its ``python3.11`` source with
``musl-gcc`` (``musl-tools``), against a static zlib built the same way.

The CPython interpreters are looked for as ``python3.X`` on ``PATH`` and
under pyenv's ``versions/``; ``WHEEL_PYTHONS`` (space-separated paths)
overrides. Build tools go to a virtualenv of their own in
``build/wheel-tools`` (pinned below), so nothing is installed into the
interpreter that runs this script.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
TOOLS = ROOT / "build" / "wheel-tools"
#: The build tools, as tested.
TOOL_REQUIREMENTS = ["maturin==1.16.0", "ziglang==0.17.1", "auditwheel==6.8.2"]
VERSIONS = ("3.10", "3.11", "3.12", "3.13")
MUSL_TARGET = "x86_64-unknown-linux-musl"


def log(text: str) -> None:
    print(f"==> {text}", flush=True)


def run(argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    """Runs a command; its standard output, or exit with everything it printed."""
    done = subprocess.run(argv, text=True, capture_output=True, env=env, cwd=cwd, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"failed ({done.returncode}): {shlex.join(argv)}")
    return done.stdout


# --- interpreters and tools ---------------------------------------------------------


def _version_of(python: str) -> str | None:
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print('{}.{}'.format(*sys.version_info[:2]))"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def interpreters(wanted: tuple[str, ...] = VERSIONS) -> dict[str, str]:
    """CPython interpreters by version, for the versions found."""
    if os.environ.get("WHEEL_PYTHONS"):
        candidates = os.environ["WHEEL_PYTHONS"].split()
    else:
        pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
        candidates = []
        for version in wanted:
            candidates += sorted(str(p) for p in pyenv.glob(f"{version}.*/bin/python{version}"))
            found = shutil.which(f"python{version}")
            if found:
                candidates.append(found)
    out: dict[str, str] = {}
    for python in candidates:
        found_version = _version_of(python)
        if found_version is not None and found_version in wanted and found_version not in out:
            out[found_version] = python
    return out


def tools() -> Path:
    """The build tools' virtualenv (created on first use)."""
    python = TOOLS / "bin" / "python"
    if not python.exists():
        log(f"build tools into {TOOLS.relative_to(ROOT)}: {' '.join(TOOL_REQUIREMENTS)}")
        run([sys.executable, "-m", "venv", str(TOOLS)])
    run([str(python), "-m", "pip", "install", "--quiet", *TOOL_REQUIREMENTS])
    return TOOLS / "bin"


def ensure_musl_target() -> None:
    """Adds the Rust musl target unless it is installed (a fresh machine has none)."""
    rustup = shutil.which("rustup")
    if rustup is None:
        raise SystemExit(f"rustup is needed to add the Rust target {MUSL_TARGET}")
    installed = run([rustup, "target", "list", "--installed"]).split()
    if MUSL_TARGET not in installed:
        log(f"rustup target add {MUSL_TARGET}")
        run([rustup, "target", "add", MUSL_TARGET])


# --- building ---------------------------------------------------------------------


def maturin(bin_dir: Path, args: list[str]) -> list[Path]:
    """Runs ``maturin build`` into a scratch folder; returns the wheels it made."""
    out = Path(tempfile.mkdtemp(prefix="wheels-", dir=ROOT / "build"))
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    started = time.monotonic()
    run([str(bin_dir / "maturin"), "build", "--release", "--out", str(out), *args], env=env)
    made = sorted(out.glob("*.whl"))
    for wheel in made:
        shutil.move(str(wheel), DIST / wheel.name)
        log(f"built {wheel.name} ({time.monotonic() - started:.0f} s)")
    shutil.rmtree(out)
    return [DIST / w.name for w in made]


def build(bin_dir: Path, pythons: dict[str, str], *, musl: bool, abi3_python: str) -> list[Path]:
    interpreters_args = [arg for p in pythons.values() for arg in ("-i", p)]
    wheels = maturin(bin_dir, ["--zig", "--compatibility", "manylinux2014", *interpreters_args])
    abi3 = ["--features", "abi3", "-i", abi3_python]
    wheels += maturin(bin_dir, ["--zig", "--compatibility", "manylinux2014", *abi3])
    if musl:
        ensure_musl_target()
        target = ["--zig", "--target", MUSL_TARGET, "--compatibility", "musllinux_1_2"]
        wheels += maturin(bin_dir, [*target, *interpreters_args])
        wheels += maturin(bin_dir, [*target, *abi3])
    return wheels


def sdist(bin_dir: Path) -> tuple[Path, Path]:
    """The sdist, and the wheel pip builds from it."""
    out = Path(tempfile.mkdtemp(prefix="sdist-", dir=ROOT / "build"))
    run([str(bin_dir / "maturin"), "sdist", "--out", str(out)])
    (made,) = out.glob("*.tar.gz")
    target = DIST / made.name
    shutil.move(str(made), target)
    log(f"built {target.name}; building a wheel from it")
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    run(
        [str(bin_dir / "python"), "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(out), str(target)],
        env=env,
    )  # fmt: skip
    (wheel,) = out.glob("*.whl")
    return target, wheel


# --- checking ---------------------------------------------------------------------


@dataclass
class Elf:
    """What the smoke test reads from an ELF shared object."""

    sections: list[str] = field(default_factory=list)
    needed: list[str] = field(default_factory=list)


def read_elf(data: bytes) -> Elf:
    """Section names and DT_NEEDED entries of a 64-bit little-endian ELF file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx]

    def name_at(table: tuple[int, ...], offset: int) -> str:
        start = table[4] + offset
        return data[start : data.index(b"\0", start)].decode()

    elf = Elf(sections=[name_at(names, h[0]) for h in headers])
    for h in headers:
        if h[1] == 6:  # SHT_DYNAMIC: (tag, value) pairs; strings in the linked section
            strtab = headers[h[6]]
            for i in range(h[5] // 16):
                tag, value = struct.unpack_from("<qQ", data, h[4] + 16 * i)
                if tag == 1:  # DT_NEEDED
                    elf.needed.append(name_at(strtab, value))
    return elf


def extension_of(wheel: Path) -> Elf:
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.startswith("streamwire/_core") and ".so" in n]
        return read_elf(zf.read(name))


def check_stripped(wheel: Path) -> Elf:
    elf = extension_of(wheel)
    left = [s for s in elf.sections if s == ".symtab" or s.startswith(".debug")]
    if left:
        raise SystemExit(f"{wheel.name}: the extension is not stripped ({', '.join(left)})")
    return elf


def claims(wheel: Path, available: dict[str, str]) -> list[str]:
    """The available CPython versions a wheel's tag says it runs on."""
    python_tag, abi_tag = wheel.name.split("-")[2:4]
    low = (int(python_tag[2]), int(python_tag[3:]))
    if abi_tag == "abi3":
        return [v for v in available if tuple(map(int, v.split("."))) >= low]
    return [v for v in available if tuple(map(int, v.split("."))) == low]


def readme_command() -> list[list[str]]:
    """The README's first command after its install step, as argv lists."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)\n", text)
    if block is None:
        raise SystemExit("README.md does not start with a sh block")
    install, sep, rest = block.group(1).partition("&&")
    if not sep or not install.strip().startswith("pip install"):
        raise SystemExit(f"README's first command is not 'pip install ... && ...': {block[1]}")
    return [shlex.split(part) for part in rest.split("&&")]


def no_rust_path(venv: Path) -> str:
    """A PATH with the venv's scripts and the system's, and no Rust toolchain."""
    keep = [str(venv / "bin")]
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or entry in keep or ".cargo" in entry or ".rustup" in entry:
            continue
        if any(os.path.exists(os.path.join(entry, tool)) for tool in ("cargo", "rustc", "rustup")):
            continue
        keep.append(entry)
    path = os.pathsep.join(keep)
    for tool in ("cargo", "rustc", "rustup"):
        if shutil.which(tool, path=path):
            raise SystemExit(f"could not build a PATH without {tool}")
    return path


def smoke(wheel: Path, python: str, version: str, expected_version: str) -> None:
    """Installs ``wheel`` into a fresh venv of ``python`` and runs it without Rust."""
    with tempfile.TemporaryDirectory(prefix="smoke-") as scratch:
        venv = Path(scratch) / "venv"
        run([python, "-m", "venv", str(venv)])
        env = {
            "PATH": no_rust_path(venv),
            "HOME": scratch,
            "LANG": "C.UTF-8",
            "PIP_NO_INDEX": "1",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }
        vpython = str(venv / "bin" / "python")
        run([vpython, "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)], env=env)
        where = run(
            [vpython, "-c", "import streamwire, sys; print(streamwire.__file__, sys.version)"],
            env=env,
            cwd=Path(scratch),
        )
        if not where.startswith(str(venv)):
            raise SystemExit(f"{wheel.name}: imported streamwire from outside the venv: {where}")
        # The pytest plugin's entry point is a module of its own: the wheel ships
        # it (found, not imported: the venv has no pytest).
        plugin = (
            "import importlib.metadata as m, importlib.util as u;"
            "e = [e for e in m.entry_points(group='pytest11') if e.name == 'streamwire'];"
            "print(u.find_spec(e[0].value).origin)"
        )
        found = run([vpython, "-c", plugin], env=env, cwd=Path(scratch)).strip()
        if not found.startswith(str(venv)):
            raise SystemExit(f"{wheel.name}: the pytest plugin's entry point: {found!r}")
        shown = run(["streamwire", "--version"], env=env).strip()
        if shown != f"streamwire {expected_version}":
            raise SystemExit(f"{wheel.name}: --version says {shown!r}")
        for argv in readme_command():
            out = run(argv, env=env, cwd=ROOT)
            if "status       completed" not in out:
                raise SystemExit(f"{wheel.name}: README command {shlex.join(argv)}: {out[-500:]}")
        out = run(["streamwire", "replay", "--no-events"], env=env, cwd=Path(scratch))
        if "reproduces the recording" not in out:
            raise SystemExit(f"{wheel.name}: replay of the bundled sample: {out[-500:]}")
    log(f"smoke test passed: {wheel.name} on CPython {version} (no Rust on PATH)")


def musl_checks(wheel: Path) -> str:
    elf = check_stripped(wheel)
    if elf.needed != ["libc.so"]:
        raise SystemExit(f"{wheel.name}: the extension needs {elf.needed}, not libc.so alone")
    return "tagged musllinux_1_2; its extension needs only libc.so (musl's soname); stripped"


def audit(bin_dir: Path, wheel: Path) -> None:
    out = run([str(bin_dir / "auditwheel"), "show", str(wheel)])
    if '"manylinux_2_17_x86_64"' not in " ".join(out.split()):
        raise SystemExit(f"{wheel.name}: auditwheel does not confirm manylinux_2_17:\n{out}")


def check(bin_dir: Path, wheels: list[Path], available: dict[str, str], version: str) -> list[str]:
    """Smoke-tests each wheel on each CPython it claims; returns a line per wheel."""
    lines = []
    musl_python = os.environ.get("MUSL_PYTHON")
    for wheel in wheels:
        if "musllinux" in wheel.name:
            note = musl_checks(wheel)
            musl_version = _version_of(musl_python) if musl_python else None
            if musl_python and musl_version and claims(wheel, {musl_version: musl_python}):
                smoke(wheel, musl_python, musl_version, version)
                note += f"; ran on musl CPython {musl_version}"
            else:
                note += "; not run (MUSL_PYTHON names no musl CPython it claims)"
            lines.append(f"{wheel.name}: {note}")
            continue
        check_stripped(wheel)
        if "manylinux" in wheel.name:
            audit(bin_dir, wheel)
        versions = claims(wheel, available)
        if not versions:
            raise SystemExit(f"{wheel.name}: no CPython here that it claims")
        for v in versions:
            smoke(wheel, available[v], v, version)
        lines.append(f"{wheel.name}: stripped; ran on CPython {', '.join(versions)}")
    return lines


def project_version() -> str:
    text = (ROOT / "Cargo.toml").read_text(encoding="utf-8")
    match = re.search(r'^version = "([^"]+)"', text, re.M)
    assert match is not None
    return match.group(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "mode",
        choices=("all", "ci", "smoke"),
        help="all: every wheel, the sdist; ci: the running CPython's wheel and the abi3 one; "
        "smoke: only the checks, of the wheels given",
    )
    parser.add_argument("wheels", nargs="*", type=Path, help="smoke: the wheels to check")
    args = parser.parse_args()
    started = time.monotonic()
    if args.mode == "smoke":
        lines = check(tools(), args.wheels, interpreters(), project_version())
        log(f"done in {time.monotonic() - started:.0f} s:")
        for line in lines:
            print(f"    {line}")
        return
    (ROOT / "build").mkdir(exist_ok=True)
    DIST.mkdir(exist_ok=True)
    for old in DIST.glob("streamwire-*"):
        old.unlink()
    version = project_version()
    bin_dir = tools()
    if args.mode == "ci":
        running = "{}.{}".format(*sys.version_info[:2])
        available = {running: sys.executable}
        wheels = build(bin_dir, available, musl=False, abi3_python=sys.executable)
        lines = check(bin_dir, wheels, available, version)
    else:
        available = interpreters()
        missing = [v for v in VERSIONS if v not in available]
        if missing:
            raise SystemExit(f"no CPython {', '.join(missing)} here (WHEEL_PYTHONS sets them)")
        wheels = build(bin_dir, available, musl=True, abi3_python=available[VERSIONS[0]])
        lines = check(bin_dir, wheels, available, version)
        source, from_source = sdist(bin_dir)
        check_stripped(from_source)
        running = "{}.{}".format(*sys.version_info[:2])
        smoke(from_source, available.get(running, sys.executable), running, version)
        lines.append(f"{source.name}: builds; its wheel ran on CPython {running}")
    log(f"done in {time.monotonic() - started:.0f} s:")
    for line in lines:
        print(f"    {line}")


if __name__ == "__main__":
    main()
