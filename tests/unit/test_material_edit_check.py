"""A user's own edit of the résumé or letter goes through the same truthfulness gate as a
writer's output, but is not blocked by it: every claim the profile does not hold is named
(the words and why), and a letter paragraph the user rewrote rests on what its new words
name. Plain functions over the writing tests' profile."""

from __future__ import annotations

from backend.pipeline.cover import offline_cover, rests_on
from backend.pipeline.documents import LetterParagraph
from backend.pipeline.material_edits import EditFacts, checked_edit
from backend.pipeline.score import offline_score
from backend.pipeline.tailor import offline_tailor
from backend.pipeline.truth import edit_claims, gate_materials
from tests.unit.test_writing import PROFILE, TODAY, job

POSTING = job()
FIT = offline_score(PROFILE, POSTING, today=TODAY)
RESUME = offline_tailor(PROFILE, POSTING, FIT)
LETTER = offline_cover(PROFILE, POSTING, FIT, RESUME, TODAY)
SPARK = "I have also used Spark for three years."


def letter_with(*texts: str):
    return LETTER.model_copy(update={"paragraphs": [
        *LETTER.paragraphs[:1], *(LetterParagraph(text=t) for t in texts), *LETTER.paragraphs[1:]]})


def facts(**changes) -> EditFacts:
    base = dict(profile=PROFILE, job=POSTING, ledger=FIT.ledger,
                resume=RESUME.model_dump(mode="json", by_alias=True),
                previous=LETTER.model_dump(mode="json", by_alias=True))
    return EditFacts(**{**base, **changes})


def test_an_edit_the_profile_holds_has_no_claims():
    assert edit_claims(RESUME, LETTER, PROFILE, FIT.ledger, POSTING, today=TODAY) == []


def test_an_unsupported_skill_in_an_edit_is_named_with_its_words_and_why():
    claims = edit_claims(None, letter_with(SPARK), PROFILE, FIT.ledger, POSTING, today=TODAY)
    assert [(c.said, c.why) for c in claims] == [
        ("I have also used Spark for three years", "Spark is not in your profile")]


def test_every_claim_of_an_edit_is_named_not_only_the_first():
    letter = letter_with(SPARK, "I hold a PhD in Physics. I speak fluent Japanese.")
    resume = RESUME.model_copy(update={"summary": "Backend engineer with 10 years of Go."})
    claims = edit_claims(resume, letter, PROFILE, FIT.ledger, POSTING, today=TODAY)
    whys = [c.why for c in claims]
    assert "Spark is not in your profile" in whys
    assert any("PhD" in c.said for c in claims)
    assert "Japanese is not in your languages" in whys
    assert any(c.said == "10 years of Go" and c.why.startswith("your profile shows") for c in claims)
    # The writer's gate still stops at the first one.
    try:
        gate_materials(resume, letter, PROFILE, FIT.ledger, POSTING, today=TODAY)
    except Exception as error:  # noqa: BLE001 - the gate's typed failure
        assert type(error).__name__ == "UnsupportedClaim"
    else:
        raise AssertionError("the writer's gate let an unsupported claim through")


def test_a_rewritten_paragraph_rests_on_what_its_new_words_name():
    assert rests_on("At Northwind I tuned PostgreSQL and ran Kafka pipelines.", PROFILE, RESUME) == [
        "Senior Backend Engineer, Northwind (2021–)", "Kafka", "PostgreSQL"]
    assert rests_on("I studied at TU Berlin and speak German.", PROFILE, RESUME)[:2] == [
        "BSc in Computer Science, TU Berlin", "German (B1)"]
    assert rests_on("Thank you for your time.", PROFILE, RESUME) == []


def test_a_saved_letter_keeps_what_the_writer_cited_and_recomputes_the_rest():
    edited = LETTER.model_copy(update={"paragraphs": [
        LETTER.paragraphs[0].model_copy(update={"text": "At Acme I wrote Go services.",
                                                "evidence": ["stale"]}),
        *LETTER.paragraphs[1:]]})
    stored, claims = checked_edit(edited, facts(), today=TODAY)
    assert claims == []
    assert stored.paragraphs[0].evidence == ["Backend Engineer, Acme (2017–2021)", "Go"]
    assert stored.paragraphs[1:] == LETTER.paragraphs[1:]
    # What is recomputed passes the gate's own evidence rule.
    gate_materials(None, stored, PROFILE, FIT.ledger, POSTING, today=TODAY)


def test_a_saved_edit_names_its_claims_and_without_a_profile_there_is_nothing_to_check():
    _stored, claims = checked_edit(letter_with(SPARK), facts(), today=TODAY)
    assert [c.as_json() for c in claims] == [{"claim": "I have also used Spark for three years",
                                              "why": "Spark is not in your profile"}]
    assert checked_edit(letter_with(SPARK), facts(profile=None), today=TODAY)[1] == []
