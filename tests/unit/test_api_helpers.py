"""Pure helpers of the loopback API: Host-header parsing and Last-Event-ID validation."""

from __future__ import annotations

import pytest

from backend.api.errors import ApiError
from backend.api.routers.events import parse_last_event_id
from backend.api.security import ALLOWED_HOSTS, host_name


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("127.0.0.1:8000", "127.0.0.1"),
        ("127.0.0.1", "127.0.0.1"),
        ("localhost", "localhost"),
        ("localhost:51234", "localhost"),
        ("[::1]:80", "[::1]"),
        ("[::1]", "[::1]"),
        ("evil.example:80", "evil.example"),
        ("evil.example", "evil.example"),
        ("", ""),
    ],
)
def test_host_name_strips_the_port(header, expected):
    assert host_name(header) == expected


@pytest.mark.parametrize(
    "header",
    [
        "evil.example:80",
        "127.0.0.1.evil.example",
        "localhost.evil.example:8000",
        "evil.example:127.0.0.1",
        "127.0.0.1@evil.example",
        "[::1]:80",  # the API binds 127.0.0.1 only
        "",
    ],
)
def test_foreign_hosts_are_not_allowed(header):
    assert host_name(header) not in ALLOWED_HOSTS


@pytest.mark.parametrize("header", ["127.0.0.1:8000", "localhost", "localhost:1"])
def test_loopback_hosts_are_allowed(header):
    assert host_name(header) in ALLOWED_HOSTS


@pytest.mark.parametrize(("raw", "expected"), [(None, None), ("", None), ("0", 0), ("42", 42),
                                               ("007", 7)])
def test_parse_last_event_id_accepts_non_negative_integers(raw, expected):
    assert parse_last_event_id(raw) == expected


@pytest.mark.parametrize(
    "raw",
    ["-1", "abc", "1.5", "1e3", " 1", "1 ", "+1", "0x10", "١٢", "²", "１２", "1_000"],
)
def test_parse_last_event_id_rejects_everything_else(raw):
    with pytest.raises(ApiError) as info:
        parse_last_event_id(raw)
    assert info.value.status == 400
    assert info.value.code == "invalid_last_event_id"
