"""Helpers of a fast start and a small footprint (issue 18): the raw Temporal address
peek that lets serve spawn before the settings models load, the remembered display probe,
the start-up trace and the heap trim after bursts."""

from __future__ import annotations

import json
import sys

import pytest

from backend.config import load_settings
from backend.paths import AppPaths, UnreadableSettings, configured_temporal_address
from backend.process import heap_trim, startup_trace
from backend.supervision import display_probe


@pytest.fixture
def no_external_env(monkeypatch):
    monkeypatch.delenv("JOBCTRL_EXTERNAL_TEMPORAL_ADDRESS", raising=False)


@pytest.mark.parametrize("document, address", [
    (None, None),
    ({}, None),
    ({"temporal": {"address": "cluster:7233", "namespace": "jobs"}}, "cluster:7233"),
    ({"temporal": {"address": ""}}, None),
    ({"dailyBudgetUsd": 5}, None),
])
def test_the_raw_peek_agrees_with_the_validated_settings(tmp_path, no_external_env,
                                                         document, address):
    paths = AppPaths(tmp_path)
    if document is not None:
        paths.settings.write_text(json.dumps(document), encoding="utf-8")
    assert configured_temporal_address(paths) == address
    assert (load_settings(paths).temporal.address or None) == address


def test_the_environment_override_wins_in_both(tmp_path, monkeypatch):
    monkeypatch.setenv("JOBCTRL_EXTERNAL_TEMPORAL_ADDRESS", "elsewhere:7233")
    paths = AppPaths(tmp_path)
    assert configured_temporal_address(paths) == "elsewhere:7233"
    assert load_settings(paths).temporal.address == "elsewhere:7233"


@pytest.mark.parametrize("text", ["{not json", "[]", '{"temporal": "x"}'])
def test_an_unreadable_settings_file_is_refused_before_anything_is_spawned(
        tmp_path, no_external_env, text):
    paths = AppPaths(tmp_path)
    paths.settings.write_text(text, encoding="utf-8")
    with pytest.raises(UnreadableSettings):
        configured_temporal_address(paths)


def test_a_passed_display_probe_is_remembered_for_the_same_conditions_only(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("DISPLAY", ":7")
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    assert not display_probe.passed_before(tmp_path)
    display_probe.remember_passed(tmp_path)
    assert display_probe.passed_before(tmp_path)
    monkeypatch.setenv("DISPLAY", ":8")  # another display: probe again
    assert not display_probe.passed_before(tmp_path)
    monkeypatch.setenv("DISPLAY", ":7")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))  # another library path: again
    assert not display_probe.passed_before(tmp_path)
    (tmp_path / display_probe.PASSED_FILE).write_text("{broken", encoding="utf-8")
    assert not display_probe.passed_before(tmp_path)


def test_milestones_are_written_for_a_benchmark_that_asks(tmp_path, monkeypatch):
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv(startup_trace.TRACE_ENV, str(trace))
    startup_trace.milestone("first_paint")
    startup_trace.milestone("services_ready")
    entries = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert [e["milestone"] for e in entries] == ["first_paint", "services_ready"]
    assert entries[0]["perf_counter"] <= entries[1]["perf_counter"]
    monkeypatch.delenv(startup_trace.TRACE_ENV)
    startup_trace.milestone("again")  # logged only
    assert len(trace.read_text(encoding="utf-8").splitlines()) == 2


class FakeClocks:
    def __init__(self) -> None:
        self.now = 0.0
        self.cpu = 0.0

    def tick(self, seconds: float, busy_share: float) -> None:
        self.now += seconds
        self.cpu += seconds * busy_share


def test_the_heap_is_trimmed_once_after_a_burst_never_while_busy_or_idle():
    clocks = FakeClocks()
    detector = heap_trim.BurstDetector(burst_cpu_s=2.0, idle_share=0.05,
                                       clock=lambda: clocks.now, cpu=lambda: clocks.cpu)
    decisions = []
    for seconds, share in ((10, 0.9), (10, 0.9), (10, 0.01), (10, 0.0), (10, 0.0)):
        clocks.tick(seconds, share)
        decisions.append(detector.burst_ended())
    assert decisions == [False, False, True, False, False]  # busy, busy, quiet: once
    clocks.tick(10, 0.1)   # a little work, below a burst
    clocks.tick(10, 0.0)
    assert detector.burst_ended() is False


def test_trimming_the_heap_works_on_linux_and_is_a_no_op_elsewhere():
    assert heap_trim.trim_heap() is sys.platform.startswith("linux")
