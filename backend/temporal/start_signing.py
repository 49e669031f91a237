"""Signed starts: the worker runs only workflows JobCtrl itself started.

The embedded Temporal dev server has no authentication: anyone on the machine who finds
its port can start a workflow on the user's task queues, and the user's worker would run
it with the user's provider keys (paid calls). So every start JobCtrl makes carries a
header, :data:`HEADER`, with an HMAC-SHA256 keyed by a secret only the user can read (32
random bytes in a 0600 file of the app dir, :func:`load_or_create_signing_key`) over the
kind of start, the workflow type, the workflow id, when it was issued and the encoded
input. Two interceptors carry it:

* :class:`SigningClientInterceptor` (installed by ``connect_temporal`` when it is given
  the app dir): ``start_workflow``, ``signal_workflow``, ``start_workflow_update`` and the
  start action of a schedule it creates or updates;
* :class:`StartGuardInterceptor` (the worker): before a new execution runs a line of
  workflow code it recomputes the signature; a foreign start fails at once with the
  non-retryable ``FOREIGN_START_REFUSED`` (no activity scheduled, no money spent); a
  foreign signal is ignored, a foreign update rejected. A workflow's own children and
  continue-as-new runs are signed by it, inside the sandbox, with the same key.

What is compared: the client signs the payloads its data converter makes of the raw
arguments; the worker re-encodes the arguments it decoded with the same (pydantic)
converter. The contracts are pydantic models, so the two agree byte for byte.

Replays: the check runs only when the workflow code is not replaying. A history's first
workflow task was checked when it first ran (or it ran before this check existed: an
upgrade keeps the runs already under way, schedules are re-signed by their reconcile pass).

Freshness: a start signature is accepted only within :data:`FRESH_S` of the execution's
start time, so a signature read from a history (anyone can read them on an open server)
cannot be replayed for long. A schedule's signature has no issue time (its runs start for
months); it is bound to the schedule's workflow-id prefix.

What this does not stop (docs/security-temporal.md): reading histories, cancelling or
terminating runs, resetting a signed run or triggering the signed schedule. A machine
shared with untrusted users needs an external Temporal with authentication.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import temporalio.api.common.v1
import temporalio.client
import temporalio.converter
import temporalio.worker
from temporalio import workflow
from temporalio.exceptions import ApplicationError

HEADER = "jobctrl-signature"
REFUSED_CODE = "FOREIGN_START_REFUSED"
KEY_FILE_NAME = "temporal-signing.key"
KEY_BYTES = 32
FRESH_S = 15 * 60  # a start's issue time vs the execution's start time, either way
VERSION = 1
START_KINDS = frozenset({"start", "child", "continue"})

Payload = temporalio.api.common.v1.Payload


# -- the key --------------------------------------------------------------------------------


def signing_key_path(app_dir: Path) -> Path:
    return Path(app_dir) / KEY_FILE_NAME


def load_or_create_signing_key(app_dir: Path) -> bytes:
    """The app dir's signing key, created (0600, atomically) on first use. Concurrent
    first calls (supervisor, API, worker) all end up with the one key that won."""
    path = signing_key_path(app_dir)
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(KEY_BYTES))
        try:
            os.link(tmp, path)  # fails if another process created it first: theirs wins
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
        key = path.read_bytes()
    if len(key) != KEY_BYTES:
        raise RuntimeError(f"{path} is not a JobCtrl signing key ({len(key)} bytes)")
    return key


# -- the signature --------------------------------------------------------------------------


def payloads_digest(payloads: Sequence[Payload]) -> str:
    """SHA-256 over each payload's metadata (sorted) and data, length-prefixed."""
    digest = hashlib.sha256()

    def put(part: bytes) -> None:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)

    put(str(len(payloads)).encode())
    for payload in payloads:
        metadata = sorted(payload.metadata.items())
        put(str(len(metadata)).encode())
        for name, value in metadata:
            put(name.encode())
            put(value)
        put(payload.data)
    return digest.hexdigest()


def encode_args(converter: temporalio.converter.PayloadConverter, args: Sequence[Any]) -> list[Payload]:
    """Payloads already encoded (a schedule read back from the server) are kept as they are."""
    if args and all(isinstance(arg, Payload) for arg in args):
        return list(args)
    return list(converter.to_payloads(list(args))) if args else []


def signature(key: bytes, *, kind: str, workflow_type: str, workflow_id: str, issued: int,
              digest: str) -> str:
    message = "\n".join(["jobctrl-start", str(VERSION), kind, workflow_type, workflow_id,
                         str(issued), digest])
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()


def signed_header(key: bytes, *, kind: str, workflow_type: str, workflow_id: str, issued: int,
                  digest: str) -> Payload:
    body = {"v": VERSION, "kind": kind, "id": workflow_id, "issued": issued,
            "sig": signature(key, kind=kind, workflow_type=workflow_type,
                             workflow_id=workflow_id, issued=issued, digest=digest)}
    return Payload(metadata={"encoding": b"json/plain"},
                   data=json.dumps(body, sort_keys=True).encode())


def with_header(headers: Mapping[str, Payload] | None, value: Payload) -> dict[str, Payload]:
    return {**(headers or {}), HEADER: value}


def read_header(headers: Mapping[str, Payload] | None) -> dict | None:
    payload = (headers or {}).get(HEADER)
    if payload is None:
        return None
    try:
        body = json.loads(payload.data)
    except ValueError:
        return None
    if not isinstance(body, dict) or body.get("v") != VERSION:
        return None
    if not all(isinstance(body.get(name), str) for name in ("kind", "id", "sig")):
        return None
    if not isinstance(body.get("issued"), int):
        return None
    return body


def verify(key: bytes, headers: Mapping[str, Payload] | None, *, workflow_type: str,
           digest: str) -> dict | None:
    """The header's body when its signature is right for this type and input, else None.
    Which kinds and ids are acceptable is the caller's business."""
    body = read_header(headers)
    if body is None:
        return None
    wanted = signature(key, kind=body["kind"], workflow_type=workflow_type,
                       workflow_id=body["id"], issued=body["issued"], digest=digest)
    return body if hmac.compare_digest(wanted, body["sig"]) else None


def start_accepted(body: dict | None, *, workflow_id: str, started_at: float) -> bool:
    """Whether a verified header allows this execution to run."""
    if body is None:
        return False
    if body["kind"] in START_KINDS:
        return body["id"] == workflow_id and abs(started_at - body["issued"]) <= FRESH_S
    if body["kind"] == "schedule":
        # A scheduled run's id is the action's id plus "-" and the scheduled time.
        return workflow_id.startswith(body["id"] + "-") and body["issued"] == 0
    return False


# -- the client side ------------------------------------------------------------------------


def _now() -> int:
    import time

    return int(time.time())


class SigningClientInterceptor(temporalio.client.Interceptor):
    def __init__(self, key: bytes,
                 converter: temporalio.converter.PayloadConverter | None = None) -> None:
        from temporalio.contrib.pydantic import pydantic_data_converter

        self.key = key
        self.converter = converter or pydantic_data_converter.payload_converter

    def intercept_client(
        self, next: temporalio.client.OutboundInterceptor
    ) -> temporalio.client.OutboundInterceptor:
        return _SigningOutbound(next, self)

    def sign_schedule_action(self, action: Any) -> None:
        if not isinstance(action, temporalio.client.ScheduleActionStartWorkflow):
            return
        digest = payloads_digest(encode_args(self.converter, action.args))
        action.headers = with_header(action.headers, signed_header(
            self.key, kind="schedule", workflow_type=action.workflow, workflow_id=action.id,
            issued=0, digest=digest))

    def schedule_action_signed(self, action: Any) -> bool:
        """Whether a schedule's start action (as described by the server) carries a
        signature this key made: a schedule made before signing, or under another key,
        needs updating."""
        if not isinstance(action, temporalio.client.ScheduleActionStartWorkflow):
            return True
        digest = payloads_digest(encode_args(self.converter, action.args))
        body = verify(self.key, action.headers, workflow_type=action.workflow, digest=digest)
        return body is not None and body["kind"] == "schedule" and body["id"] == action.id


def signing_interceptor(client: temporalio.client.Client) -> SigningClientInterceptor | None:
    for interceptor in client.config().get("interceptors") or []:
        if isinstance(interceptor, SigningClientInterceptor):
            return interceptor
    return None


class _SigningOutbound(temporalio.client.OutboundInterceptor):
    def __init__(self, next: temporalio.client.OutboundInterceptor,
                 root: SigningClientInterceptor) -> None:
        super().__init__(next)
        self._root = root

    def _header(self, kind: str, workflow_type: str, workflow_id: str, args: Sequence[Any],
                issued: int | None = None) -> Payload:
        digest = payloads_digest(encode_args(self._root.converter, args))
        return signed_header(self._root.key, kind=kind, workflow_type=workflow_type,
                             workflow_id=workflow_id,
                             issued=_now() if issued is None else issued, digest=digest)

    async def start_workflow(self, input: temporalio.client.StartWorkflowInput) -> Any:
        input.headers = with_header(input.headers, self._header(
            "start", input.workflow, input.id, input.args))
        return await self.next.start_workflow(input)

    async def signal_workflow(self, input: temporalio.client.SignalWorkflowInput) -> None:
        input.headers = with_header(input.headers, self._header(
            "signal", input.signal, input.id, input.args))
        await self.next.signal_workflow(input)

    async def start_workflow_update(self, input: temporalio.client.StartWorkflowUpdateInput) -> Any:
        input.headers = with_header(input.headers, self._header(
            "update", input.update, input.id, input.args))
        return await self.next.start_workflow_update(input)

    async def create_schedule(self, input: temporalio.client.CreateScheduleInput) -> Any:
        self._root.sign_schedule_action(input.schedule.action)
        return await self.next.create_schedule(input)

    async def update_schedule(self, input: temporalio.client.UpdateScheduleInput) -> None:
        updater = input.updater

        async def signed(update_input: temporalio.client.ScheduleUpdateInput) -> Any:
            update = updater(update_input)
            if hasattr(update, "__await__"):
                update = await update
            if update is not None:
                self._root.sign_schedule_action(update.schedule.action)
            return update

        await self.next.update_schedule(replace(input, updater=signed))


# -- the worker side ------------------------------------------------------------------------


class StartGuardInterceptor(temporalio.worker.Interceptor):
    """Refuses work JobCtrl did not start, and signs what its workflows start."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def workflow_interceptor_class(
        self, input: temporalio.worker.WorkflowInterceptorClassInput
    ) -> type[temporalio.worker.WorkflowInboundInterceptor]:
        # The class carries the key: the SDK builds one inbound interceptor per
        # workflow (inside the sandbox) from the class alone.
        return type("SignedStartGuard", (_GuardInbound,), {"_key": self._key})


def _digest_in_workflow(args: Sequence[Any]) -> str:
    return payloads_digest(encode_args(workflow.payload_converter(), args))


def _refuse(what: str) -> NoReturn:
    raise ApplicationError(
        f"{what} was not started by this JobCtrl (no valid {HEADER} header): refused",
        type=REFUSED_CODE, non_retryable=True)


class _GuardInbound(temporalio.worker.WorkflowInboundInterceptor):
    _key: bytes = b""

    def init(self, outbound: temporalio.worker.WorkflowOutboundInterceptor) -> None:
        self.next.init(_GuardOutbound(outbound, self._key))

    async def execute_workflow(self, input: temporalio.worker.ExecuteWorkflowInput) -> Any:
        if not workflow.unsafe.is_replaying():
            info = workflow.info()
            body = verify(self._key, input.headers, workflow_type=info.workflow_type,
                          digest=_digest_in_workflow(input.args))
            if not start_accepted(body, workflow_id=info.workflow_id,
                                  started_at=info.workflow_start_time.timestamp()):
                workflow.logger.warning("refused a foreign start of %s", info.workflow_type)
                _refuse(f"This {info.workflow_type} run")
        return await self.next.execute_workflow(input)

    def _message_signed(self, kind: str, name: str, input: Any) -> bool:
        body = verify(self._key, input.headers, workflow_type=name,
                      digest=_digest_in_workflow(input.args))
        return (body is not None and body["kind"] == kind
                and body["id"] == workflow.info().workflow_id)

    # Signals and updates are checked on replay too: a replay must drop exactly what the
    # first run dropped (the key does not change; JobCtrl's workflows define none yet).

    async def handle_signal(self, input: temporalio.worker.HandleSignalInput) -> None:
        if not self._message_signed("signal", input.signal, input):
            if not workflow.unsafe.is_replaying():
                workflow.logger.warning("ignored a foreign signal %s", input.signal)
            return
        await self.next.handle_signal(input)

    def handle_update_validator(self, input: temporalio.worker.HandleUpdateInput) -> None:
        if not self._message_signed("update", input.update, input):
            _refuse(f"The update {input.update}")
        self.next.handle_update_validator(input)

    async def handle_update_handler(self, input: temporalio.worker.HandleUpdateInput) -> Any:
        # Updates without a validator reach only the handler: refused before it runs.
        if not self._message_signed("update", input.update, input):
            _refuse(f"The update {input.update}")
        return await self.next.handle_update_handler(input)


class _GuardOutbound(temporalio.worker.WorkflowOutboundInterceptor):
    def __init__(self, next: temporalio.worker.WorkflowOutboundInterceptor, key: bytes) -> None:
        super().__init__(next)
        self._key = key

    def _header(self, kind: str, workflow_type: str, workflow_id: str,
                args: Sequence[Any]) -> Payload:
        return signed_header(self._key, kind=kind, workflow_type=workflow_type,
                             workflow_id=workflow_id, issued=int(workflow.now().timestamp()),
                             digest=_digest_in_workflow(args))

    async def start_child_workflow(
        self, input: temporalio.worker.StartChildWorkflowInput
    ) -> workflow.ChildWorkflowHandle:
        input.headers = with_header(input.headers, self._header(
            "child", input.workflow, input.id, input.args))
        return await self.next.start_child_workflow(input)

    def continue_as_new(self, input: temporalio.worker.ContinueAsNewInput) -> NoReturn:
        info = workflow.info()
        input.headers = with_header(input.headers, self._header(
            "continue", input.workflow or info.workflow_type, info.workflow_id, input.args))
        self.next.continue_as_new(input)
