"""Per-family rates, the fallback, the user override and Decimal cost math."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from backend.config import AppPaths
from backend.llm.base import LlmConfigurationError
from backend.llm.rates import estimate_llm_cost_usd, load_rates

MILLION = 1_000_000


@pytest.fixture
def paths(tmp_path) -> AppPaths:
    return AppPaths(tmp_path)


@pytest.mark.parametrize(
    ("provider", "model", "local", "family", "per_million_in", "per_million_out"),
    [
        ("openai_compat", "gpt-4o", False, "gpt-4o", "2.50", "10.00"),
        ("openai_compat", "GPT-4o-2024-08-06", False, "gpt-4o", "2.50", "10.00"),
        ("openai_compat", "openai/gpt-4o-mini", False, "gpt-4o", "2.50", "10.00"),
        ("openai_compat", "gemini-2.5-flash", False, "gemini", "0.30", "2.50"),
        ("openai_compat", "google/gemini-2.0-flash", False, "gemini", "0.30", "2.50"),
        ("anthropic", "claude-sonnet-4-5", False, "claude", "3.00", "15.00"),
        ("openai_compat", "anthropic/claude-3.5-haiku", False, "claude", "3.00", "15.00"),
        ("openai_compat", "llama3.1:8b", True, "local", "0", "0"),
        ("openai_compat", "qwen2.5:14b", True, "local", "0", "0"),
        ("openai_compat", "mistral-nemo", True, "local", "0", "0"),
        ("openai_compat", "phi4", True, "local", "0", "0"),
        ("openai_compat", "gemma2:9b", True, "local", "0", "0"),
        ("openai_compat", "deepseek-r1:14b", True, "local", "0", "0"),
        ("offline", "offline-heuristic", False, "offline", "0", "0"),
        # Open-weights names served by a hosted API are not free: the fallback prices them.
        ("openai_compat", "meta-llama/llama-3.1-70b-instruct", False, "fallback", "1.00",
         "4.00"),
        ("openai_compat", "dolphin-unknown", True, "fallback", "1.00", "4.00"),
        ("openai_compat", "o3-mini", False, "fallback", "1.00", "4.00"),
        # A local proxy in front of a paid model still pays the paid family's rate.
        ("openai_compat", "gpt-4o", True, "gpt-4o", "2.50", "10.00"),
    ],
)
def test_families_and_fallback(provider, model, local, family, per_million_in,
                               per_million_out):
    rates = load_rates()
    matched, rate = rates.lookup(provider, model, local=local)
    assert matched == family
    assert rate.input_per_million == Decimal(per_million_in)
    assert rate.output_per_million == Decimal(per_million_out)
    cost = estimate_llm_cost_usd(rates, provider, model, MILLION, MILLION, local=local)
    assert cost == Decimal(per_million_in) + Decimal(per_million_out)
    assert isinstance(cost, Decimal)


def test_cost_is_exact_decimal_for_small_calls():
    rates = load_rates()
    # 1,234 input at $2.50/M + 567 output at $10/M = 0.003085 + 0.00567
    assert estimate_llm_cost_usd(rates, "openai_compat", "gpt-4o", 1234, 567) == Decimal(
        "0.008755")
    # Summing 1,000 tiny calls stays exact (no float drift).
    one = estimate_llm_cost_usd(rates, "openai_compat", "gemini-2.5-flash", 1, 1)
    assert sum([one] * 1000, Decimal(0)) == Decimal("0.0028")


def test_bundled_rates_without_paths(paths):
    assert load_rates() == load_rates(paths)  # no override file: the bundled table


def test_user_override_families_come_first_and_fallback_replaces(paths):
    (paths.app_dir / "llm_rates.json").write_text(json.dumps({
        "families": [
            {"family": "my-gpt-4o", "match": ["gpt-4o"], "input": "2.00", "output": 8},
            {"family": "o-series", "match": ["o3"], "input": 1.10, "output": "4.40"},
        ],
        "fallback": {"input": "5", "output": "20"},
    }), encoding="utf-8")
    rates = load_rates(paths)
    assert rates.lookup("openai_compat", "gpt-4o")[0] == "my-gpt-4o"
    assert estimate_llm_cost_usd(rates, "openai_compat", "o3-mini", MILLION, MILLION) == Decimal(
        "5.50")
    assert rates.lookup("anthropic", "claude-opus-4")[0] == "claude"  # bundled still there
    assert estimate_llm_cost_usd(rates, "openai_compat", "unknown", MILLION, 0) == Decimal("5")


def test_user_override_without_fallback_keeps_the_bundled_one(paths):
    (paths.app_dir / "llm_rates.json").write_text(
        '{"families": [{"family": "x", "match": ["x-model"], "input": "9", "output": "9"}]}',
        encoding="utf-8")
    rates = load_rates(paths)
    assert rates.fallback.input_per_million == Decimal("1.00")


@pytest.mark.parametrize(
    "content",
    ["not json", '{"families": [{"family": "x", "match": ["y"], "input": -1, "output": 1}]}',
     '{"families": [{"family": "x", "match": ["y"], "input": "abc", "output": 1}]}',
     '{"families": [{"family": "x", "input": 1, "output": 1}]}', "[]"],
)
def test_an_invalid_override_is_a_configuration_error(paths, content):
    (paths.app_dir / "llm_rates.json").write_text(content, encoding="utf-8")
    with pytest.raises(LlmConfigurationError) as caught:
        load_rates(paths)
    assert "llm_rates.json" in str(caught.value)
