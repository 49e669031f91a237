"""What a failed activity leaves in the Temporal history: a bounded code, never the
exception's text — an OSError writing ``<Full Name> - Resume - <Company>.pdf`` quotes the
user's name. The local log keeps the detail."""

from __future__ import annotations

import errno
import logging
from datetime import timedelta

import pytest
from temporalio.api.failure.v1 import Failure
from temporalio.converter import DataConverter
from temporalio.exceptions import ApplicationError
from temporalio.worker import ActivityInboundInterceptor

from backend.llm.base import LlmUnavailableError
from backend.pipeline.documents import ResumeDoc
from backend.pipeline.pdf import render_resume_pdf
from backend.temporal.interceptors import FailureSanitizer, sanitized_failure

FULL_NAME = "Ada Lovelace-Byron"


class _Raising(ActivityInboundInterceptor):
    def __init__(self, error: BaseException):
        self._error = error

    async def execute_activity(self, input):
        raise self._error


async def _recorded(error: BaseException) -> tuple[BaseException, Failure]:
    """What leaves the worker's interceptor chain, and the failure Temporal would store."""
    inbound = FailureSanitizer().intercept_activity(_Raising(error))
    with pytest.raises(BaseException) as raised:
        await inbound.execute_activity(None)
    failure = Failure()
    await DataConverter.default.encode_failure(raised.value, failure)
    return raised.value, failure


def _real_write_error(tmp_path) -> OSError:
    """The OSError a PDF render raises on a name the file system refuses, as it happened."""
    target = tmp_path / f"{FULL_NAME} - Resume - {'株式会社' * 30}.pdf"
    try:
        render_resume_pdf(ResumeDoc(name=FULL_NAME), target)
    except OSError as error:
        return error
    raise AssertionError("the write was expected to fail")


async def test_a_failed_file_write_leaves_no_personal_data_in_the_temporal_failure(
        tmp_path, caplog):
    error = _real_write_error(tmp_path)
    assert FULL_NAME in str(error)  # the raw error quotes the path
    with caplog.at_level(logging.WARNING, logger="backend.temporal.interceptors"):
        raised, failure = await _recorded(error)
    assert isinstance(raised, ApplicationError)
    assert raised.type == "file_name_too_long" and raised.non_retryable
    stored = failure.SerializeToString() + str(failure).encode()
    for secret in (FULL_NAME, "Lovelace", "株式会社", str(tmp_path)):
        assert secret.encode() not in stored, secret
    assert failure.message == "file_name_too_long"
    assert failure.application_failure_info.type == "file_name_too_long"
    assert not failure.HasField("cause")
    # The local log keeps the detail.
    assert any(record.exc_info and record.exc_info[1] is error for record in caplog.records)


@pytest.mark.parametrize(("error", "code", "retryable"), [
    (PermissionError(errno.EACCES, "Permission denied", f"/home/x/{FULL_NAME}.pdf"),
     "file_permission_denied", True),
    (OSError(errno.ENOSPC, "No space left on device", f"/home/x/{FULL_NAME}.pdf"),
     "disk_full", True),
    (OSError(errno.EIO, "I/O error", f"/home/x/{FULL_NAME}.pdf"), "file_io_failed", True),
    (ValueError(f"bad value for {FULL_NAME}"), "activity_failed", True),
    (KeyError(FULL_NAME), "activity_failed", True),
])
async def test_untyped_exceptions_become_bounded_codes(error, code, retryable):
    raised, failure = await _recorded(error)
    assert (raised.type, not raised.non_retryable) == (code, retryable)
    assert FULL_NAME.encode() not in failure.SerializeToString()


async def test_typed_failures_keep_their_code_retry_and_delay_but_not_their_text():
    provider = LlmUnavailableError(f"provider said: hello {FULL_NAME}", retry_after_s=7)
    raised, failure = await _recorded(provider)
    assert raised.type == "provider_unavailable" and not raised.non_retryable
    assert raised.next_retry_delay == timedelta(seconds=7)
    assert FULL_NAME.encode() not in failure.SerializeToString()

    try:
        raise OSError(f"/home/x/{FULL_NAME}.pdf")
    except OSError:
        own = ApplicationError(f"could not write for {FULL_NAME}", {"path": FULL_NAME},
                               type="missing_input", non_retryable=True)
    # Raised inside the except block: its context (and details) would travel with it.
    raised, failure = await _recorded(own)
    assert (raised.type, raised.non_retryable) == ("missing_input", True)
    assert FULL_NAME.encode() not in failure.SerializeToString()
    assert not failure.HasField("cause")


async def test_an_unbounded_application_error_type_is_not_trusted():
    raised, _failure = await _recorded(ApplicationError("x", type=f"{FULL_NAME} failed"))
    assert raised.type == "activity_failed"


async def test_a_clean_failure_and_a_cancellation_pass_unchanged():
    clean = ApplicationError("smtp_unavailable", type="smtp_unavailable")
    assert (await _recorded(clean))[0] is clean
    import asyncio

    inbound = FailureSanitizer().intercept_activity(_Raising(asyncio.CancelledError()))
    with pytest.raises(asyncio.CancelledError):
        await inbound.execute_activity(None)


def test_the_sanitised_failure_has_no_details_and_no_cause():
    failure = sanitized_failure(OSError(f"/home/{FULL_NAME}"))
    assert failure.details == () and failure.__cause__ is None
    assert failure.message == failure.type == "file_io_failed"


def test_the_worker_installs_the_sanitizer():
    import inspect

    from backend.temporal import worker

    assert "FailureSanitizer()" in inspect.getsource(worker.run_worker)
