"""Apply domain: target classification, challenge detection (fail closed), packets and
the exact-approval rule."""

from __future__ import annotations

import pytest

from backend.apply.challenge import detect_challenge
from backend.apply.packet import ApplyPacket, approval_matches, build_packet, profile_answers
from backend.domain.apply_targets import ApplyTarget, classify_target, mailto_address
from backend.domain.profile import CandidateProfile


def test_an_http_apply_url_is_a_browser_form():
    target = classify_target("https://acme.example/jobs/1/apply", "<p>mailto:x@y.org</p>")
    assert target == ApplyTarget("browser_form", url="https://acme.example/jobs/1/apply")


def test_a_mailto_link_in_the_description_is_an_email_target():
    html = '<p>Send your CV to <a href="mailto:Jobs@Acme.Example?subject=Hi">us</a>.</p>'
    target = classify_target(None, html)
    assert target.kind == "email"
    assert target.recipient == "Jobs@acme.example"
    assert target.url == "mailto:Jobs@acme.example"


@pytest.mark.parametrize("apply_url,html", [
    (None, None), ("ftp://acme.example/form", "<p>no link</p>"), ("not a url", ""),
    (None, '<a href="mailto:a@b.org,c@d.org">two</a>'), (None, '<a href="mailto:nobody">x</a>'),
])
def test_anything_else_is_unknown(apply_url, html):
    assert classify_target(apply_url, html).kind == "unknown"


def test_mailto_address_rejects_lists_and_junk():
    assert mailto_address("mailto:hr@acme.example") == "hr@acme.example"
    assert mailto_address("mailto:a@b.org,c@d.org") is None
    assert mailto_address("https://acme.example") is None


@pytest.mark.parametrize("page", [
    '<div class="g-recaptcha" data-sitekey="x"></div>',
    '<script src="https://js.hcaptcha.com/1/api.js"></script><div class="h-captcha"></div>',
    '<div class="cf-turnstile"></div>',
    "<title>Just a moment...</title><p>Checking your browser before accessing</p>",
    "<p>Please complete the CAPTCHA to continue.</p>",
    "<p>Please verify you are a human.</p>",
])
def test_challenges_are_detected(page):
    assert detect_challenge(page) is not None


def test_a_bot_protection_response_is_a_challenge_even_without_markers():
    assert detect_challenge("<p>denied</p>", status=403,
                            headers={"cf-mitigated": "challenge"}) == "bot_protection"


def test_a_plain_form_is_not_a_challenge():
    page = "<form><input name='name'><input type='file' name='resume'></form>"
    assert detect_challenge(page) is None
    assert detect_challenge(page, status=403) is None  # a 403 alone is not a challenge


PROFILE = CandidateProfile(name="Ada Example", email="ada@example.org", phone="+49 30 1234",
                           locations=["Berlin"], salary_floor=70000, salary_currency="EUR")


def test_answers_come_only_from_the_profile():
    answers = profile_answers(PROFILE)
    assert answers == {"fullName": "Ada Example", "email": "ada@example.org",
                       "phone": "+49 30 1234", "location": "Berlin",
                       "salaryExpectation": "70000 EUR"}
    assert profile_answers(CandidateProfile()) == {}
    assert profile_answers(None) == {}


def test_a_packet_names_target_and_both_pdfs_and_none_for_unknown():
    target = ApplyTarget("browser_form", url="https://acme.example/apply")
    packet = build_packet(target, resume_pdf="/a/r.pdf", cover_letter_pdf="/a/c.pdf",
                          profile=PROFILE)
    assert packet.as_json()["targetUrl"] == "https://acme.example/apply"
    assert packet.attachments == ["/a/r.pdf", "/a/c.pdf"]
    assert ApplyPacket.from_json(packet.as_json()) == packet
    assert build_packet(ApplyTarget("unknown"), resume_pdf="/a/r.pdf",
                        cover_letter_pdf="/a/c.pdf", profile=PROFILE) is None


def test_email_approval_must_name_the_exact_recipient_and_attachments():
    target = ApplyTarget("email", url="mailto:hr@acme.example", recipient="hr@acme.example")
    packet = build_packet(target, resume_pdf="/a/r.pdf", cover_letter_pdf="/a/c.pdf",
                          profile=PROFILE)
    exact = {"recipient": "hr@acme.example", "attachments": ["/a/c.pdf", "/a/r.pdf"]}
    assert approval_matches(packet, target, **exact)
    assert not approval_matches(packet, target, recipient="hr@evil.example",
                                attachments=exact["attachments"])
    assert not approval_matches(packet, target, recipient="hr@acme.example",
                                attachments=["/a/r.pdf"])
    assert not approval_matches(packet, target, recipient=None, attachments=None)
    browser = ApplyTarget("browser_form", url="https://acme.example")
    assert approval_matches(packet, browser, recipient=None, attachments=None)
