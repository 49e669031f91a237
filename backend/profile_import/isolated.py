"""One résumé import in a child process, with a memory cap and a deadline.

A résumé file is untrusted input handed to parsers (pdfminer, lxml) whose cost the file
decides. :mod:`backend.profile_import.limits` refuses the files that are plainly past a
résumé before parsing; this runner bounds whatever gets through: the import runs in a
child (``jobctrl import-resume``: in a frozen build the one executable's subcommand, from
source ``python -m backend.cli import-resume``), the parent waits with a deadline and kills
it on time-out, and the child cannot grow past the memory cap — on Linux by
``RLIMIT_AS``, which the child sets on itself before it imports the readers; elsewhere
(Windows, and macOS where ``RLIMIT_AS`` is not enforced) by a watchdog in the parent that
kills the child once its resident size passes the cap. A child killed for memory or time,
or one that dies, is :class:`~backend.profile_import.errors.ResumeTooComplex`.

The file goes in on stdin (a JSON header line, then the bytes); the answer comes back on
stdout as one JSON document: the :class:`~backend.profile_import.ImportResult`, or the
typed error's code and message, and the child's peak resident size.

The module imports only the standard library at the top: the child pays for the readers
it needs and nothing of the API.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from backend.profile_import import ImportResult
    from backend.profile_import.errors import ResumeImportError

log = logging.getLogger(__name__)

IMPORT_COMMAND = "import-resume"  # the cli's subcommand (backend/cli.py)
MEMORY_CAP_BYTES = 300 * 1024**2  # a three-page résumé peaks under 100 MB in the child
DEADLINE_S = 30.0                 # a three-page résumé takes about 1 s, child start included
MAX_CONCURRENT = 2                # children at once: each may use up to the cap

# The child reads these; the parent sets them.
MEMORY_CAP_ENV = "JOBCTRL_IMPORT_MEMORY_CAP"  # bytes for RLIMIT_AS; absent: no rlimit
CPU_LIMIT_ENV = "JOBCTRL_IMPORT_CPU_S"        # RLIMIT_CPU: a child orphaned mid-import ends
# Test hook, honoured only in the child and only with JOBCTRL_ENABLE_FAULTS=1 (as
# backend/faults.py): "allocate" grows until it is stopped, "hang" sleeps past any deadline.
FAULT_ENV = "JOBCTRL_IMPORT_FAULT"
FAULTS_ENABLED_ENV = "JOBCTRL_ENABLE_FAULTS"

FAULT_CEILING_BYTES = 1024**3
_CHUNK = 8 * 1024**2

WATCHDOG_POLL_S = 0.02

# answered: the import's own answer (a result or its typed error); exhausted: the child ran
# out of memory (under the rlimit) or of recursion depth and said so; over_memory: the
# watchdog killed it; over_time: the deadline did; died: it ended without an answer.
Outcome = Literal["answered", "exhausted", "over_memory", "over_time", "died"]

_slots = threading.BoundedSemaphore(MAX_CONCURRENT)


def rlimit_enforced() -> bool:
    """Where ``RLIMIT_AS`` really bounds a process (Linux); macOS accepts it but does not
    enforce it, Windows has no rlimits."""
    return sys.platform.startswith("linux")


def child_argv() -> list[str]:
    """The same rule as ``supervision.process.child_command`` (a layer above this one):
    a frozen build is one executable and the import is its subcommand."""
    if getattr(sys, "frozen", False):
        return [sys.executable, IMPORT_COMMAND]
    return [sys.executable, "-m", "backend.cli", IMPORT_COMMAND]


@dataclass(frozen=True)
class ChildRun:
    """What one child did: its answer (a result or a typed error) and what it cost."""

    outcome: Outcome
    seconds: float
    peak_rss_bytes: int | None  # the child's own peak when it answered, else the watchdog's
    result: ImportResult | None = None
    error: ResumeImportError | None = None

    def unwrap(self) -> ImportResult:
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


def import_in_child(data: bytes, *, file_name: str | None,
                    content_type: str | None) -> ImportResult:
    """:func:`backend.profile_import.import_resume`, bounded: raises its typed errors,
    and :class:`ResumeTooComplex` for a child over the memory cap or the deadline."""
    return run_in_child(data, file_name=file_name, content_type=content_type,
                        memory_cap_bytes=MEMORY_CAP_BYTES, deadline_s=DEADLINE_S).unwrap()


def run_in_child(data: bytes, *, file_name: str | None, content_type: str | None,
                 memory_cap_bytes: int = MEMORY_CAP_BYTES, deadline_s: float = DEADLINE_S,
                 use_rlimit: bool | None = None, env: dict[str, str] | None = None) -> ChildRun:
    """Run one import in a child and wait for it (blocking: call it from a thread).
    ``use_rlimit`` None: the rlimit where it is enforced, the watchdog elsewhere."""
    from backend.profile_import.errors import ResumeTooComplex

    rlimit = rlimit_enforced() if use_rlimit is None else use_rlimit
    child_env = {**os.environ, **(env or {}), CPU_LIMIT_ENV: str(int(deadline_s) + 5)}
    child_env.pop(MEMORY_CAP_ENV, None)
    if rlimit:
        child_env[MEMORY_CAP_ENV] = str(memory_cap_bytes)
    header = json.dumps({"fileName": file_name, "contentType": content_type}).encode()
    with _slots:
        started = time.monotonic()
        process = subprocess.Popen(child_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=child_env)
        watchdog = None if rlimit else _Watchdog(process, memory_cap_bytes)
        try:
            stdout, stderr = process.communicate(header + b"\n" + data, timeout=deadline_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            timed_out = True
        finally:
            if watchdog is not None:
                watchdog.stop()
        seconds = time.monotonic() - started
    watched_peak = watchdog.peak if watchdog is not None else None
    if watchdog is not None and watchdog.killed:
        log.warning("résumé import: child over %d MB after %.1f s, stopped",
                    memory_cap_bytes // 1024**2, seconds)
        return ChildRun("over_memory", seconds, watched_peak, error=ResumeTooComplex())
    if timed_out:
        log.warning("résumé import: child past its %.0f s deadline, stopped", deadline_s)
        return ChildRun("over_time", seconds, watched_peak, error=ResumeTooComplex())
    answer = _answer(stdout)
    if answer is None:
        log.warning("résumé import: child ended with code %s and no answer: %s",
                    process.returncode, _tail(stderr))
        return ChildRun("died", seconds, watched_peak, error=ResumeTooComplex())
    peak = answer.get("peakRssBytes") or watched_peak
    if "result" in answer:
        return ChildRun("answered", seconds, peak, result=_result(answer["result"]))
    error = _error(answer["error"])
    if answer["error"].get("internal"):
        log.error("résumé import: the reader failed: %s", _tail(stderr))
    if answer["error"].get("exhausted"):
        log.warning("résumé import: child ran out of %s after %.1f s",
                    answer["error"]["exhausted"], seconds)
        return ChildRun("exhausted", seconds, peak, error=error)
    return ChildRun("answered", seconds, peak, error=error)


class _Watchdog:
    """Polls the child's resident size; kills it once past the cap (where no rlimit does)."""

    def __init__(self, process: subprocess.Popen, cap: int) -> None:
        import psutil

        self.peak = 0
        self.killed = False
        self._cap = cap
        self._done = threading.Event()
        try:
            self._child = psutil.Process(process.pid)
        except psutil.Error:  # already gone: nothing to watch
            self._child = None
            return
        self._process = process
        self._thread = threading.Thread(target=self._watch, name="import-watchdog", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        import psutil

        while not self._done.wait(WATCHDOG_POLL_S):
            try:
                rss = self._child.memory_info().rss
            except psutil.Error:
                return
            self.peak = max(self.peak, rss)
            if rss > self._cap:
                self.killed = True
                self._process.kill()
                return

    def stop(self) -> None:
        self._done.set()
        if self._child is not None:
            self._thread.join()


def _answer(stdout: bytes) -> dict[str, Any] | None:
    try:
        answer = json.loads(stdout)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) and ("result" in answer or "error" in answer) \
        else None


def _result(payload: dict[str, Any]) -> ImportResult:
    from backend.domain.resume import JsonResume
    from backend.profile_import import ImportResult

    rest = {key: value for key, value in payload.items() if key != "resume"}
    return ImportResult(resume=JsonResume.model_validate(payload["resume"]), **rest)


def _error(payload: dict[str, Any]) -> ResumeImportError:
    """The child's typed error as the same class, with its message."""
    from backend.profile_import import errors

    classes = {cls.code: cls for cls in _subclasses(errors.ResumeImportError)}
    if payload.get("internal"):
        return errors.ResumeUnreadable(errors.DAMAGED_FILE)
    cls = classes.get(payload.get("code"), errors.ResumeTooComplex)
    return cls(payload.get("message") or None)


def _subclasses(cls: type) -> list[type]:
    found = [cls]
    for sub in cls.__subclasses__():
        found.extend(_subclasses(sub))
    return found


def _tail(stderr: bytes, limit: int = 2000) -> str:
    return stderr[-limit:].decode("utf-8", "replace").strip() or "(nothing on stderr)"


# --------------------------------------------------------------------------- the child


def run_child() -> None:
    """``jobctrl import-resume``: limits first, then the import, one answer on stdout."""
    answer_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a library's print() goes to stderr, never into the answer
    _limit_self()
    logging.disable(logging.WARNING)  # pdfminer's per-object warnings are not news
    header = json.loads(sys.stdin.buffer.readline())
    data = sys.stdin.buffer.read()
    answer: dict[str, Any]
    try:
        _fault()
        answer = _import(data, header)
    except MemoryError:
        answer = {"error": {"code": "resume_too_complex", "exhausted": "memory"}}
    except RecursionError:
        answer = {"error": {"code": "resume_too_complex", "exhausted": "recursion depth"}}
    except Exception:  # noqa: BLE001 - a reader's bug: the parent logs it, the user gets a typed answer
        import traceback

        traceback.print_exc()
        answer = {"error": {"code": "resume_unreadable", "internal": True}}
    answer["peakRssBytes"] = _peak_rss()
    answer_out.write(json.dumps(answer).encode())
    answer_out.flush()
    sys.stderr.flush()
    os._exit(0)  # no interpreter teardown: nothing is left to clean up


def _import(data: bytes, header: dict[str, Any]) -> dict[str, Any]:
    from backend.profile_import import import_resume
    from backend.profile_import.errors import ResumeImportError

    try:
        result = import_resume(data, file_name=header.get("fileName"),
                               content_type=header.get("contentType"))
    except ResumeImportError as error:
        return {"error": {"code": error.code, "message": error.message}}
    # Every field as it is (plain JSON values), the résumé as its fields were set.
    plain = {field.name: getattr(result, field.name) for field in fields(result)}
    plain["resume"] = result.resume.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return {"result": plain}


def _limit_self() -> None:
    try:
        import resource
    except ImportError:  # Windows: the parent's watchdog and deadline bound the child
        return
    cap = os.environ.get(MEMORY_CAP_ENV)
    if cap:
        resource.setrlimit(resource.RLIMIT_AS, (int(cap), int(cap)))
    cpu = os.environ.get(CPU_LIMIT_ENV)
    if cpu:
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu), int(cpu) + 1))


def _fault() -> None:
    if os.environ.get(FAULTS_ENABLED_ENV) != "1":
        return
    fault = os.environ.get(FAULT_ENV)
    if fault == "hang":
        time.sleep(3600)
    elif fault == "allocate":
        held = []
        while len(held) < FAULT_CEILING_BYTES // _CHUNK:  # a broken cap must not eat the host
            held.append(b"x" * _CHUNK)  # written, so resident, not only reserved
        time.sleep(3600)


def _peak_rss() -> int | None:
    """This process's peak resident size. Not ``ru_maxrss`` on Linux: execve carries the
    parent's high-water mark into it (the API's size, not the child's)."""
    if sys.platform.startswith("linux"):
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return None
    try:
        import resource
    except ImportError:
        import psutil

        return getattr(psutil.Process().memory_info(), "peak_wset", None)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # bytes on macOS
