"""Child processes that cannot outlive their parent.

Three layers, because no single one works everywhere:
- Linux: the kernel sends SIGTERM to the child when the parent dies (PR_SET_PDEATHSIG).
- Windows: children join a Job Object that kills them when the parent's handle closes.
- Everywhere: a pid file lists live children; the next start reaps leftovers whose
  process start time still matches (so a recycled pid is never killed by mistake).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import sys
from pathlib import Path

import psutil

PR_SET_PDEATHSIG = 1


def linux_parent_death_hook(parent_pid: int):
    """A ``preexec_fn`` for the child: die with the parent, even if it already died."""

    def hook() -> None:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent_pid:
            os._exit(1)

    return hook


class WindowsKillOnCloseJob:
    """A Job Object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE; only this process holds it."""

    JobObjectExtendedLimitInformation = 9
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
    PROCESS_ALL_ACCESS = 0x1F0FFF

    def __init__(self) -> None:
        from ctypes import wintypes

        class IoCounters(ctypes.Structure):
            _fields_ = [(name, ctypes.c_ulonglong) for name in (
                "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
                "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]

        class BasicLimits(ctypes.Structure):
            _fields_ = [
                ("PerProcessUserTimeLimit", ctypes.c_int64),
                ("PerJobUserTimeLimit", ctypes.c_int64),
                ("LimitFlags", wintypes.DWORD),
                ("MinimumWorkingSetSize", ctypes.c_size_t),
                ("MaximumWorkingSetSize", ctypes.c_size_t),
                ("ActiveProcessLimit", wintypes.DWORD),
                ("Affinity", ctypes.c_size_t),
                ("PriorityClass", wintypes.DWORD),
                ("SchedulingClass", wintypes.DWORD),
            ]

        class ExtendedLimits(ctypes.Structure):
            _fields_ = [
                ("BasicLimitInformation", BasicLimits),
                ("IoInfo", IoCounters),
                ("ProcessMemoryLimit", ctypes.c_size_t),
                ("JobMemoryLimit", ctypes.c_size_t),
                ("PeakProcessMemoryUsed", ctypes.c_size_t),
                ("PeakJobMemoryUsed", ctypes.c_size_t),
            ]

        self._kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        self._job = self._kernel32.CreateJobObjectW(None, None)
        limits = ExtendedLimits()
        limits.BasicLimitInformation.LimitFlags = self.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        self._kernel32.SetInformationJobObject(
            self._job, self.JobObjectExtendedLimitInformation,
            ctypes.byref(limits), ctypes.sizeof(limits),
        )

    def assign(self, pid: int) -> None:
        handle = self._kernel32.OpenProcess(self.PROCESS_ALL_ACCESS, False, pid)
        try:
            self._kernel32.AssignProcessToJobObject(self._job, handle)
        finally:
            self._kernel32.CloseHandle(handle)


class ChildRegistry:
    """The pid file of live children, and the reaper of an earlier crash's leftovers."""

    def __init__(self, pid_file: Path):
        self._path = pid_file
        self._children: dict[str, dict] = {}
        self._job = WindowsKillOnCloseJob() if sys.platform == "win32" else None

    def popen_options(self) -> dict:
        """Children get their own session / process group so a terminal's Ctrl-C reaches
        only the supervisor, which then stops them in order."""
        if sys.platform.startswith("linux"):
            return {"start_new_session": True, "preexec_fn": linux_parent_death_hook(os.getpid())}
        if sys.platform == "win32":
            return {"creationflags": 0x00000200}  # CREATE_NEW_PROCESS_GROUP
        return {"start_new_session": True}

    def register(self, name: str, pid: int) -> None:
        if self._job is not None:
            self._job.assign(pid)
        with contextlib.suppress(psutil.Error):
            created = psutil.Process(pid).create_time()
            self._children[name] = {"pid": pid, "createTime": created}
        self._save()

    def unregister(self, name: str) -> None:
        self._children.pop(name, None)
        self._save()

    def _save(self) -> None:
        if self._children:
            self._path.write_text(json.dumps(self._children), encoding="utf-8")
        else:
            self._path.unlink(missing_ok=True)

    def reap_leftovers(self, timeout: float = 5.0) -> list[int]:
        """Terminate children recorded by a previous parent that died without cleanup."""
        if not self._path.exists():
            return []
        try:
            recorded = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            recorded = {}
        if not isinstance(recorded, dict):
            recorded = {}
        leftovers = []
        for entry in recorded.values():
            with contextlib.suppress(psutil.Error, KeyError, TypeError, ValueError):
                process = psutil.Process(int(entry["pid"]))
                if abs(process.create_time() - float(entry["createTime"])) < 0.01:
                    leftovers.append(process)
        for process in leftovers:
            with contextlib.suppress(psutil.Error):
                process.terminate()
        _, alive = psutil.wait_procs(leftovers, timeout=timeout)
        for process in alive:
            with contextlib.suppress(psutil.Error):
                process.kill()
        self._path.unlink(missing_ok=True)
        return [process.pid for process in leftovers]
