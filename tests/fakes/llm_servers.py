"""A real loopback HTTP server that speaks both LLM wire formats.

``POST /v1/chat/completions`` answers like an OpenAI-compatible server and
``POST /v1/messages`` like Anthropic's Messages API, with scripted text and token usage.
It counts every request it receives (``.calls``), so pipeline tests can assert how many
paid calls were made, and it can be told to fail::

    with FakeLlmServer() as server:
        server.reply_with('{"score": 80}')        # or a callable(request) -> str
        server.fail_next(500, times=2)            # then succeeds
        provider = OpenAiCompatProvider(base_url=server.openai_base_url, model="gpt-4o")

Or use the ``llm_server`` pytest fixture (import it into a test module or conftest).
"""

from __future__ import annotations

import json
import random
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

DEFAULT_REPLY = '{"ok": true}'


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any  # decoded JSON, or the raw text when it was not JSON
    received_at: float = 0.0  # time.monotonic() when it arrived

    @property
    def kind(self) -> str:
        return "anthropic" if self.path.endswith("/messages") else "openai"


Reply = str | Callable[[RecordedRequest], str]


@dataclass
class _Failure:
    status: int
    remaining: int
    body: dict | str | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _State:
    reply: Reply = DEFAULT_REPLY
    usage: tuple[int, int] | None = (100, 50)
    failures: list[_Failure] = field(default_factory=list)
    delay_s: float = 0.0
    require_key: str | None = None
    requests: list[RecordedRequest] = field(default_factory=list)
    succeeded: int = 0
    abandoned: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    hold_until: int = 0  # hold each request until this many are in flight (0: never)
    hold_timeout_s: float = 0.0
    fault_rate: float = 0.0  # share of requests answered with a random fault status
    fault_statuses: tuple[int, ...] = ()
    fault_rng: random.Random | None = None
    faults: int = 0


def _error_body(status: int, kind: str) -> dict:
    error_type = {401: "authentication_error", 403: "permission_error", 404: "not_found_error",
                  429: "rate_limit_error"}.get(status, "api_error" if status >= 500
                                               else "invalid_request_error")
    return {"type": "error", "error": {"type": error_type,
                                       "message": f"scripted {status} from the fake ({kind})"}}


class FakeLlmServer:
    def __init__(self, host: str = "127.0.0.1"):
        self._lock = threading.Lock()
        self._flight = threading.Condition(self._lock)
        self._state = _State()
        self._httpd = ThreadingHTTPServer((host, 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------

    def start(self) -> FakeLlmServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                name="fake-llm-server", daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> FakeLlmServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- addresses --------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The server root, e.g. ``http://127.0.0.1:54321`` (Anthropic base URL)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        """The OpenAI-compatible base URL (``{url}/v1``)."""
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    # -- scripting --------------------------------------------------------------------

    def reply_with(self, text: Reply) -> None:
        """Text of every following successful reply, or a callable(request) -> text."""
        with self._lock:
            self._state.reply = text

    def set_usage(self, input_tokens: int | None, output_tokens: int | None = None) -> None:
        """Token usage reported by successful replies; ``None`` omits usage entirely."""
        with self._lock:
            self._state.usage = None if input_tokens is None else (input_tokens,
                                                                   output_tokens or 0)

    def fail_next(self, status: int, times: int = 1, body: dict | str | None = None,
                  headers: dict[str, str] | None = None) -> None:
        """Answer the next ``times`` requests with HTTP ``status`` (after earlier failures),
        with a provider-style error body unless ``body`` is given, plus ``headers``."""
        with self._lock:
            self._state.failures.append(_Failure(status, times, body, dict(headers or {})))

    def fail_randomly(self, rate: float, statuses: tuple[int, ...] = (429, 500),
                      seed: int = 0) -> None:
        """Answer each following request, with probability ``rate``, with one of
        ``statuses`` (a provider-style error body, no usage: nothing to bill). Seeded, so
        a run's fault sequence repeats; ``faults`` counts them."""
        with self._lock:
            self._state.fault_rate, self._state.fault_statuses = rate, tuple(statuses)
            self._state.fault_rng = random.Random(seed)

    def delay(self, seconds: float) -> None:
        """Wait this long before answering (to provoke client timeouts)."""
        with self._lock:
            self._state.delay_s = seconds

    def hold_until_in_flight(self, count: int, timeout_s: float = 20.0) -> None:
        """Hold every request until ``count`` requests are in flight together (or
        ``timeout_s`` passed), then answer them all: concurrency becomes observable
        without timing, because a client that allows ``count`` parallel calls reaches the
        threshold at once, and ``max_in_flight`` shows whether it ever went beyond."""
        with self._lock:
            self._state.hold_until, self._state.hold_timeout_s = count, timeout_s

    def require_key(self, key: str | None) -> None:
        """Answer 401 unless the request carries this key (bearer or x-api-key)."""
        with self._lock:
            self._state.require_key = key

    def reset(self) -> None:
        with self._lock:
            self._state = _State()

    # -- observations -----------------------------------------------------------------

    @property
    def calls(self) -> int:
        """Every request received, failed ones included."""
        with self._lock:
            return len(self._state.requests)

    @property
    def succeeded(self) -> int:
        """Requests answered 200 to a client still waiting: the ones a real provider
        bills and the caller received."""
        with self._lock:
            return self._state.succeeded

    @property
    def faults(self) -> int:
        """Requests answered with a random fault (see ``fail_randomly``)."""
        with self._lock:
            return self._state.faults

    @property
    def abandoned(self) -> int:
        """Requests whose client had gone (timed out, killed, canceled) by the time the
        200 was ready: computed, never received."""
        with self._lock:
            return self._state.abandoned

    @property
    def in_flight(self) -> int:
        """Requests received and not yet answered."""
        with self._lock:
            return self._state.in_flight

    @property
    def max_in_flight(self) -> int:
        """The most requests ever in flight at the same time."""
        with self._lock:
            return self._state.max_in_flight

    def _enter_flight(self) -> _State:
        with self._flight:
            state = self._state
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
            self._flight.notify_all()
            if state.hold_until:
                self._flight.wait_for(lambda: state.in_flight >= state.hold_until,
                                      timeout=state.hold_timeout_s)
        return state

    def _leave_flight(self, state: _State) -> None:
        with self._flight:
            state.in_flight -= 1

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._state.requests)

    @property
    def last_request(self) -> RecordedRequest | None:
        with self._lock:
            return self._state.requests[-1] if self._state.requests else None

    # -- serving ----------------------------------------------------------------------

    def _answer(self, request: RecordedRequest) -> tuple[int, dict | str, dict[str, str]]:
        with self._lock:
            state = self._state
            state.requests.append(request)
            delay = state.delay_s
        if delay:
            threading.Event().wait(delay)
        with self._lock:
            if state.failures:
                failure = state.failures[0]
                failure.remaining -= 1
                if failure.remaining <= 0:
                    state.failures.pop(0)
                return failure.status, (failure.body if failure.body is not None
                                        else _error_body(failure.status, request.kind)
                                        ), failure.headers
            if state.fault_rng is not None and state.fault_rng.random() < state.fault_rate:
                state.faults += 1
                status = state.fault_rng.choice(state.fault_statuses)
                return status, _error_body(status, request.kind), {}
            if request.path not in ("/v1/chat/completions", "/v1/messages"):
                return 404, _error_body(404, request.kind), {}
            if request.method != "POST" or not isinstance(request.body, dict):
                return 400, _error_body(400, request.kind), {}
            if state.require_key is not None:
                supplied = request.headers.get("x-api-key") or request.headers.get(
                    "authorization", "").removeprefix("Bearer ")
                if supplied != state.require_key:
                    return 401, _error_body(401, request.kind), {}
            reply, usage = state.reply, state.usage
        text = reply(request) if callable(reply) else reply
        model = request.body.get("model", "unknown")
        if request.kind == "anthropic":
            payload: dict = {
                "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            }
            if usage is not None:
                payload["usage"] = {"input_tokens": usage[0], "output_tokens": usage[1]}
        else:
            payload = {
                "id": "chatcmpl-fake", "object": "chat.completion", "model": model,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
            }
            if usage is not None:
                payload["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                                    "total_tokens": usage[0] + usage[1]}
        return 200, payload, {}

    def _count_answer(self, state: _State, status: int, connection: socket.socket) -> bool:
        """Count a 200 as received or abandoned; True when the client is gone."""
        gone = _client_gone(connection)
        if status == 200:
            with self._lock:
                if gone:
                    state.abandoned += 1
                else:
                    state.succeeded += 1
        return gone

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                request = RecordedRequest(
                    method=self.command, path=self.path.split("?", 1)[0],
                    headers={k.lower(): v for k, v in self.headers.items()}, body=body,
                    received_at=time.monotonic(),
                )
                state = server._enter_flight()
                try:
                    status, payload, headers = server._answer(request)
                finally:
                    server._leave_flight(state)
                if server._count_answer(state, status, self.connection):
                    self.close_connection = True  # nobody is left to read the answer
                    return
                data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
                self.send_response(status)
                content_type = "text/plain" if isinstance(payload, str) else "application/json"
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            do_POST = _handle
            do_GET = _handle

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

        return Handler


def _client_gone(connection: socket.socket) -> bool:
    """The client closed its end (a timeout, a killed process, a cancel): readable with
    nothing to read, or reset. A pipelined next request is data, not gone."""
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        return bool(readable) and connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


@pytest.fixture
def llm_server():
    """A started FakeLlmServer, stopped after the test."""
    with FakeLlmServer() as server:
        yield server
