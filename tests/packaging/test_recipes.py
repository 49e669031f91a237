"""The installer recipes without a build: the Linux install script on a stand-in app, the
launcher entry, the icon writer, and the macOS and Windows recipes' required entries.

Fast (no PyInstaller): part of the normal run. The frozen app itself is tested by
test_frozen_smoke.py (marked ``packaging``).
"""

from __future__ import annotations

import configparser
import json
import os
import plistlib
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.packaging.frozen_app import WINDOWS_APP_ID, LinuxInstallation, user_env

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"


def fake_unpacked_tarball(folder: Path, version: str) -> Path:
    """The tarball's layout (as packaging/build.py writes it) around a stand-in executable."""
    top = folder / f"JobCtrl-{version}-linux-x86_64"
    (top / "app" / "_internal").mkdir(parents=True)
    exe = top / "app" / "jobctrl"
    exe.write_text(f"#!/bin/sh\necho jobctrl {version} \"$@\"\n", encoding="utf-8")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    (top / "app" / "_internal" / "version.txt").write_text(version, encoding="utf-8")
    shutil.copy2(PACKAGING / "linux" / "install.sh", top / "install.sh")
    (top / "share" / "applications").mkdir(parents=True)
    shutil.copy2(PACKAGING / "linux" / "jobctrl.desktop", top / "share" / "applications")
    icons = top / "share" / "icons" / "hicolor" / "256x256" / "apps"
    icons.mkdir(parents=True)
    shutil.copy2(ROOT / "resources" / "icons" / "jobctrl.png", icons / "jobctrl.png")
    return top


@pytest.fixture
def home(tmp_path) -> Path:
    path = tmp_path / "home with space"
    path.mkdir()
    return path


def installation(home: Path, tmp_path: Path, version: str) -> LinuxInstallation:
    return LinuxInstallation(home=home, unpacked=fake_unpacked_tarball(tmp_path / version, version))


def desktop_entry(path: Path) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive in desktop entries
    parser.read(path, encoding="utf-8")
    return dict(parser["Desktop Entry"])


def test_install_places_program_launcher_icon_and_command(home, tmp_path):
    installed = installation(home, tmp_path, "1.0")
    result = installed.run_installer()
    assert result.returncode == 0, result.stderr
    assert (installed.prefix / "_internal" / "version.txt").read_text() == "1.0"
    entry = desktop_entry(installed.desktop_file)
    # The path has a space: Exec quotes it, TryExec (a plain string) does not.
    assert entry["Exec"] == f'"{installed.executable}" desktop'
    assert entry["TryExec"] == str(installed.executable)
    assert entry["Type"] == "Application" and entry["Icon"] == "jobctrl"
    assert entry["Categories"].endswith(";")
    assert installed.icon_file.read_bytes() == (ROOT / "resources" / "icons" / "jobctrl.png").read_bytes()
    ran = subprocess.run([str(installed.command_link), "serve"], capture_output=True, text=True,
                         env=user_env(home))
    assert ran.stdout.strip() == "jobctrl 1.0 serve"
    assert not installed.default_app_dir.exists()  # the app makes its data folder, not the installer


def test_upgrade_replaces_the_program_and_keeps_the_data(home, tmp_path):
    old = installation(home, tmp_path, "1.0")
    assert old.run_installer().returncode == 0
    (old.prefix / "_internal" / "stale-module.py").write_text("from 1.0", encoding="utf-8")
    old.default_app_dir.mkdir(parents=True)
    (old.default_app_dir / "jobctrl.db").write_bytes(b"the user's jobs")

    new = installation(home, tmp_path, "2.0")
    result = new.run_installer()
    assert result.returncode == 0, result.stderr
    assert (new.prefix / "_internal" / "version.txt").read_text() == "2.0"
    assert not (new.prefix / "_internal" / "stale-module.py").exists()
    assert (new.default_app_dir / "jobctrl.db").read_bytes() == b"the user's jobs"
    assert sorted(p.name for p in new.prefix.parent.iterdir()) == ["JobCtrl"]  # no staging left


def test_install_refuses_an_app_dir_inside_the_program_folder(home, tmp_path):
    installed = installation(home, tmp_path, "1.0")
    inside = installed.prefix / "data"
    result = subprocess.run(["sh", str(installed.unpacked / "install.sh")], capture_output=True, text=True,
                            env=user_env(home, JOBCTRL_APP_DIR=str(inside)))
    assert result.returncode == 1
    assert "inside" in result.stderr
    assert not installed.executable.exists()
    assert not installed.desktop_file.exists()


def test_install_refuses_while_jobctrl_runs(home, tmp_path):
    installed = installation(home, tmp_path, "1.0")
    assert installed.run_installer().returncode == 0
    installed.default_app_dir.mkdir(parents=True)
    # A live pid in runtime.json (pretty-printed, as the app writes it): this test's own.
    runtime = {"apiBaseUrl": "http://127.0.0.1:1", "pids": {"supervisor": os.getpid(), "api": 999999999}}
    (installed.default_app_dir / "runtime.json").write_text(json.dumps(runtime, indent=2))
    (installed.prefix / "_internal" / "marker").write_text("still the old install")

    newer = installation(home, tmp_path, "2.0")
    upgrade = newer.run_installer()
    assert upgrade.returncode == 1
    assert "Quit it first" in upgrade.stderr
    assert (installed.prefix / "_internal" / "marker").exists()

    (installed.default_app_dir / "runtime.json").unlink()  # stopped: the upgrade goes ahead
    assert newer.run_installer().returncode == 0
    assert not (installed.prefix / "_internal" / "marker").exists()


def test_uninstall_keeps_the_data_unless_purged(home, tmp_path):
    installed = installation(home, tmp_path, "1.0")
    assert installed.run_installer().returncode == 0
    installed.default_app_dir.mkdir(parents=True)
    (installed.default_app_dir / "jobctrl.db").write_bytes(b"jobs")

    removed = subprocess.run(["sh", str(installed.prefix / "install.sh"), "--uninstall"],
                             capture_output=True, text=True, env=user_env(home))
    assert removed.returncode == 0, removed.stderr
    assert not installed.prefix.exists()
    assert not installed.desktop_file.exists() and not installed.icon_file.exists()
    assert not installed.command_link.is_symlink()
    assert (installed.default_app_dir / "jobctrl.db").read_bytes() == b"jobs"

    assert installed.run_installer().returncode == 0
    purged = subprocess.run(["sh", str(installed.prefix / "install.sh"), "--uninstall", "--purge"],
                            capture_output=True, text=True, env=user_env(home))
    assert purged.returncode == 0, purged.stderr
    assert not installed.default_app_dir.exists()


def test_icon_writer_makes_png_ico_and_icns(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, str(PACKAGING / "make_icon.py"), str(tmp_path)],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    png = (tmp_path / "jobctrl.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(png[16:20], "big") == int.from_bytes(png[20:24], "big") == 256
    ico = (tmp_path / "jobctrl.ico").read_bytes()
    assert ico[:4] == b"\x00\x00\x01\x00" and int.from_bytes(ico[4:6], "little") >= 1
    assert (tmp_path / "jobctrl.icns").read_bytes()[:4] == b"icns"


def test_macos_info_plist_has_what_a_tray_app_needs():
    with open(PACKAGING / "macos" / "Info.plist", "rb") as handle:
        info = plistlib.load(handle)
    assert info["NSHighResolutionCapable"] is True
    assert info["LSUIElement"] is False  # a window app with a tray icon; see the plist's comment
    assert info["NSPrincipalClass"] == "NSApplication"
    assert info["CFBundleExecutable"] == "jobctrl"
    assert info["NSAppTransportSecurity"]["NSAllowsLocalNetworking"] is True
    assert info["CFBundleIdentifier"].count(".") >= 2
    with open(PACKAGING / "macos" / "entitlements.plist", "rb") as handle:
        assert plistlib.load(handle)["com.apple.security.cs.allow-unsigned-executable-memory"] is True


def test_windows_installer_keeps_data_and_upgrades_in_place():
    iss = (PACKAGING / "windows" / "jobctrl.iss").read_text(encoding="utf-8")
    sections = {line.strip() for line in iss.splitlines() if line.startswith("[")}
    assert {"[Setup]", "[Files]", "[Icons]", "[Tasks]", "[Code]", "[InstallDelete]"} <= sections
    assert "AppId={{" in iss  # one fixed id: a new version upgrades the old install
    assert '{autoprograms}\\{#AppName}' in iss and '{autodesktop}\\{#AppName}' in iss
    assert 'Source: "{#DistDir}\\jobctrl\\*"' in iss
    # Data is deleted only after an explicit Yes (No is the default button), never silently.
    assert "MB_DEFBUTTON2) = IDYES" in iss and "not UninstallSilent()" in iss
    assert "{localappdata}\\{#AppName}" in iss


def test_windows_smoke_test_looks_for_the_installer_s_own_app_id():
    iss = (PACKAGING / "windows" / "jobctrl.iss").read_text(encoding="utf-8")
    # Inno Setup writes a literal "{" as "{{" in the script; the registry key has one.
    assert f"AppId={{{WINDOWS_APP_ID}" in iss


def release_jobs() -> dict[str, dict]:
    import yaml

    workflow = yaml.safe_load((PACKAGING / "release.yml").read_text(encoding="utf-8"))
    return workflow["jobs"]


def job_commands(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def test_release_recipes_build_and_smoke_test_on_every_platform():
    jobs = release_jobs()
    runners = {name: job["runs-on"] for name, job in jobs.items()}
    assert runners["linux"].startswith("ubuntu") and runners["windows"].startswith("windows")
    assert set(jobs["macos"]["strategy"]["matrix"]["runner"]) == {"macos-14", "macos-13"}  # both CPUs
    assert "scripts/package-smoke" in job_commands(jobs["linux"])  # build.py + the smoke test
    for name in ("windows", "macos"):
        commands = job_commands(jobs[name])
        assert "packaging" in commands and "build.py" in commands, name
        # The same smoke test, on the installer that build just wrote.
        assert "pytest tests/packaging -m packaging" in commands, name
        assert "JOBCTRL_SMOKE_ARTIFACT" in commands and "size-report.json" in commands, name
        assert ".[test,packaging]" in commands, name
    assert "innosetup" in job_commands(jobs["windows"])
    for name, job in jobs.items():
        uploads = [step for step in job["steps"]
                   if step.get("uses", "").startswith("actions/upload-artifact")]
        assert uploads and uploads[0]["with"]["if-no-files-found"] == "error", name


def load_build_script():
    """packaging/ is not a package (it would shadow PyPI's ``packaging``): load the script."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("jobctrl_build", PACKAGING / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_build_stops_when_a_bundled_library_needs_one_this_machine_lacks(tmp_path):
    import PySide6
    import shiboken6

    build = load_build_script()
    onedir = tmp_path / "jobctrl"
    contents = onedir / "_internal"
    contents.mkdir(parents=True)
    # A real bundled library, alone: what it links (shiboken, QtCore) is in no search path.
    pyside = next(Path(PySide6.__file__).parent.glob("libpyside6.abi3.so.*"))
    shutil.copy(pyside, contents)
    missing = build.unresolved_libraries(onedir)
    assert set(missing) == {pyside.name}
    assert {"libQt6Core.so.6", f"libshiboken6.abi3.so.{pyside.name.rsplit('.so.', 1)[1]}"} <= set(
        missing[pyside.name])
    with pytest.raises(SystemExit, match="libxcb-icccm4"):
        build.check_libraries(onedir, allow_missing=False)
    build.check_libraries(onedir, allow_missing=True)  # only reported

    # The bundle is searched first: a library the bundle carries is not missing.
    shiboken = next(Path(shiboken6.__file__).parent.glob("libshiboken6.abi3.so.*"))
    shutil.copy(shiboken, contents)
    still = build.unresolved_libraries(onedir)
    assert shiboken.name not in still.get(pyside.name, [])
    assert "libQt6Core.so.6" in still[pyside.name]
