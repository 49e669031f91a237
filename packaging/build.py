"""Builds the JobCtrl installer for this platform and prints what takes the room.

    .venv/bin/python packaging/build.py [--dist dist] [--work build] [--skip-freeze]

Run as a script (``scripts/package`` does): this folder is deliberately not an importable
package, because its name would shadow the PyPI ``packaging`` module that pip,
setuptools and PyInstaller import.

- every platform: the PyInstaller onedir ``<dist>/jobctrl/`` from ``packaging/jobctrl.spec``
- Linux: ``<dist>/JobCtrl-<version>-linux-<arch>.tar.gz`` — the app, a ``.desktop``
  entry, the icon and ``install.sh`` (see packaging/README.md for why not an AppImage)
- Windows: ``<dist>/JobCtrl-<version>-windows-x64-setup.exe`` through Inno Setup's
  ``ISCC`` when it is installed (``packaging/windows/jobctrl.iss``)
- macOS: ``<dist>/JobCtrl.app`` and, through ``packaging/macos/make_dmg.sh``, a ``.dmg``

``<dist>/size-report.json`` records the sizes it prints.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
APP_NAME = "JobCtrl"
EXE_NAME = "jobctrl"

# Size groups for the report: the first prefix that matches a path (relative to the
# onedir's contents folder) names its group.
SIZE_GROUPS = (
    ("Temporal CLI + dev server (bin/temporal)", ("bin/",)),
    ("ICU (Unicode data linked by QtCore)", ("PySide6/Qt/lib/libicu",)),
    ("Qt 6 libraries, plugins, translations", ("PySide6/Qt/",)),
    ("PySide6 + shiboken6 bindings", ("PySide6/", "shiboken6/")),
    ("Temporal SDK (Rust core bridge)", ("temporalio/",)),
    ("Python runtime + stdlib", ("libpython", "python3", "base_library.zip", "lib-dynload/")),
    ("cryptography (keyring's Secret Service)", ("cryptography/", "libcrypto", "libssl")),
    ("Pillow + fontTools (fpdf2's PDFs)", ("PIL/", "pillow.libs/", "fontTools/", "fpdf/")),
    ("pydantic-core", ("pydantic_core/",)),
)


def project_version() -> str:
    with open(ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["project"]["version"]


def arch() -> str:
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


def make_icons(work: Path) -> Path:
    icons = work / "icons"
    subprocess.run([sys.executable, str(PACKAGING / "make_icon.py"), str(icons)], check=True,
                   stdout=subprocess.DEVNULL)
    return icons


def freeze(dist: Path, work: Path, version: str) -> Path:
    """PyInstaller onedir → ``<dist>/jobctrl/`` (and ``JobCtrl.app`` on macOS)."""
    icons = make_icons(work)
    env = {**os.environ, "JOBCTRL_ICON_DIR": str(icons), "JOBCTRL_VERSION": version}
    subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
         "--distpath", str(dist), "--workpath", str(work / "pyinstaller"),
         str(PACKAGING / "jobctrl.spec")],
        check=True, env=env, cwd=ROOT,
    )
    return dist / EXE_NAME


# -- Linux: a self-contained tarball with a freedesktop launcher -------------------------


def linux_tarball(onedir: Path, dist: Path, work: Path, version: str) -> Path:
    name = f"{APP_NAME}-{version}-linux-{arch()}"
    stage = work / name
    shutil.rmtree(stage, ignore_errors=True)
    shutil.copytree(onedir, stage / "app", symlinks=True)
    shutil.copy2(PACKAGING / "linux" / "install.sh", stage / "install.sh")
    (stage / "share" / "applications").mkdir(parents=True)
    shutil.copy2(PACKAGING / "linux" / "jobctrl.desktop", stage / "share" / "applications")
    icon_dir = stage / "share" / "icons" / "hicolor" / "256x256" / "apps"
    icon_dir.mkdir(parents=True)
    shutil.copy2(work / "icons" / "jobctrl.png", icon_dir / "jobctrl.png")
    (stage / "README.txt").write_text(
        f"JobCtrl {version}\n\nInstall:    ./install.sh\nUninstall:  ~/.local/opt/JobCtrl/install.sh"
        " --uninstall   (keeps your data; add --purge to delete it)\n"
        "Or run it in place without installing: ./app/jobctrl\n",
        encoding="utf-8",
    )
    tarball = dist / f"{name}.tar.gz"
    with tarfile.open(tarball, "w:gz", compresslevel=6) as archive:
        archive.add(stage, arcname=name)
    shutil.rmtree(stage)
    return tarball


# -- Windows and macOS: hand the onedir to the platform's installer tool ------------------


def windows_installer(dist: Path, version: str) -> Path | None:
    iscc = shutil.which("ISCC") or shutil.which("iscc")
    program_files = os.environ.get("PROGRAMFILES(X86)", r"C:\Program Files (x86)")  # case-blind on Windows
    default = Path(program_files) / "Inno Setup 6" / "ISCC.exe"
    if iscc is None and default.is_file():
        iscc = str(default)
    if iscc is None:
        print("Inno Setup (ISCC) not found: install it from jrsoftware.org, then run "
              f"ISCC /DAppVersion={version} packaging\\windows\\jobctrl.iss", file=sys.stderr)
        return None
    subprocess.run([iscc, f"/DAppVersion={version}", f"/DDistDir={dist}",
                    str(PACKAGING / "windows" / "jobctrl.iss")], check=True)
    return dist / f"{APP_NAME}-{version}-windows-x64-setup.exe"


def macos_dmg(dist: Path, version: str) -> Path:
    subprocess.run(["bash", str(PACKAGING / "macos" / "make_dmg.sh"), str(dist / f"{APP_NAME}.app"),
                    version, str(dist)], check=True)
    return dist / f"{APP_NAME}-{version}-macos-{arch()}.dmg"


# -- unresolved libraries (Linux) ----------------------------------------------------------


def unresolved_libraries(onedir: Path) -> dict[str, list[str]]:
    """Each bundled ELF library or plugin -> the libraries ``ldd`` cannot find, looking in
    the bundle first. PyInstaller only warns when the build machine lacks a dependency
    (e.g. ``libxcb-icccm4`` for Qt's xcb plugin); the bundle would then fail on a desktop
    without it, so the build stops instead."""
    contents = onedir / "_internal"
    search = os.pathsep.join(str(path) for path in (contents, contents / "PySide6" / "Qt" / "lib"))
    missing: dict[str, list[str]] = {}
    for path in sorted(contents.rglob("*.so*")):
        if path.is_symlink() or not path.is_file() or path.read_bytes()[:4] != b"\x7fELF":
            continue
        result = subprocess.run(["ldd", str(path)], capture_output=True, text=True,
                                env={**os.environ, "LD_LIBRARY_PATH": search})
        names = [line.split()[0] for line in result.stdout.splitlines() if "not found" in line]
        if names:
            missing[str(path.relative_to(contents))] = names
    return missing


def check_libraries(onedir: Path, allow_missing: bool) -> None:
    missing = unresolved_libraries(onedir)
    for where, names in missing.items():
        print(f"unresolved: {where} needs {', '.join(names)}", file=sys.stderr)
    if missing and not allow_missing:
        raise SystemExit(
            "Some bundled libraries need system libraries the build machine lacks, so the"
            " bundle would not start on a desktop without them. Install them here (Debian:"
            " libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxkbcommon-x11-0"
            " libwayland-cursor0) and rebuild,"
            " or pass --allow-missing-libraries.")


# -- the size report ---------------------------------------------------------------------


def tree_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def size_breakdown(onedir: Path) -> dict:
    contents = onedir / "_internal" if (onedir / "_internal").is_dir() else onedir
    groups = {label: 0 for label, _ in SIZE_GROUPS}
    other = 0
    for path in onedir.rglob("*"):
        if not path.is_file() or path.is_symlink():
            continue
        size = path.stat().st_size
        rel = path.relative_to(contents).as_posix() if path.is_relative_to(contents) else path.name
        for label, prefixes in SIZE_GROUPS:
            if any(rel.startswith(prefix) or f"/{prefix}" in f"/{rel}" for prefix in prefixes):
                groups[label] += size
                break
        else:
            other += size
    groups["everything else (other packages, system libraries, the launcher)"] = other
    return {"total_bytes": tree_size(onedir), "groups_bytes": groups}


def print_report(report: dict) -> None:
    mb = 1024 * 1024
    print(f"\nUnpacked bundle: {report['total_bytes'] / mb:.1f} MB ({report['onedir']})")
    for label, size in sorted(report["groups_bytes"].items(), key=lambda item: -item[1]):
        print(f"  {size / mb:7.1f} MB  {label}")
    if report.get("artifact"):
        print(f"Artifact: {report['artifact']} — {report['artifact_bytes'] / mb:.1f} MB")
    print(f"Build time: {report['build_seconds']:.0f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", default=str(ROOT / "dist"), help="output folder (default dist/)")
    parser.add_argument("--work", default=str(ROOT / "build"), help="scratch folder (default build/)")
    parser.add_argument("--skip-freeze", action="store_true",
                        help="reuse <dist>/jobctrl from an earlier run; only repackage")
    parser.add_argument("--allow-missing-libraries", action="store_true",
                        help="Linux: package even if a bundled library needs one this machine lacks")
    args = parser.parse_args(argv)
    dist, work = Path(args.dist).resolve(), Path(args.work).resolve()
    dist.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    version = project_version()
    started = time.monotonic()

    onedir = dist / EXE_NAME
    if args.skip_freeze:
        make_icons(work)
    else:
        onedir = freeze(dist, work, version)
    artifact: Path | None
    if sys.platform.startswith("linux"):
        check_libraries(onedir, args.allow_missing_libraries)
        artifact = linux_tarball(onedir, dist, work, version)
    elif sys.platform == "win32":
        artifact = windows_installer(dist, version)
    elif sys.platform == "darwin":
        artifact = macos_dmg(dist, version)
    else:
        artifact = None

    report = {"version": version, "platform": sys.platform, "arch": arch(), "onedir": str(onedir),
              **size_breakdown(onedir), "build_seconds": time.monotonic() - started}
    if artifact is not None and artifact.is_file():
        report.update(artifact=str(artifact), artifact_bytes=artifact.stat().st_size)
    (dist / "size-report.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    print_report(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
