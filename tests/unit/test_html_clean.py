"""Properties of the description HTML cleaner on generated trees: it never drops or adds
text, cleaning twice changes nothing, and its work grows linearly with the tree (judged by
its own step count, never by wall time: timings are bench/source_parsing.py's)."""

from __future__ import annotations

import html
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.sources.html_clean import ALLOWED_TAGS, DROP_TAGS, clean_html, html_text
from tests.unit.test_source_families import assert_safe_html

INLINE = ["b", "i", "strong", "em", "span", "a", "u", "font", "code"]
BLOCK = ["p", "div", "section", "ul", "ol", "li", "h2", "h5", "blockquote", "table", "tr",
         "td", "article", "pre", "dl", "dd"]
DROPPED = ["script", "style", "noscript", "template"]
TEXT = st.text(
    alphabet=st.one_of(
        st.characters(exclude_categories=("Cs", "Cc", "Co", "Cn")),
        st.sampled_from(list(" \n\t<>&\"';/=#")),
    ),
    max_size=12,
)


class Node:
    """A generated element: its tag and children (Node or text)."""

    def __init__(self, tag: str, children: list):
        self.tag, self.children = tag, children

    def html(self) -> str:
        inner = "".join(child.html() if isinstance(child, Node) else html.escape(child, False)
                        for child in self.children)
        attrs = ' href="https://jobs.example/apply?a=1&amp;b=2"' if self.tag == "a" else ""
        attrs += ' class="x" onclick="steal()"' if self.tag in ("div", "span") else ""
        return f"<{self.tag}{attrs}>{inner}</{self.tag}>"

    def __repr__(self) -> str:  # hypothesis shows the failing document itself
        return repr(self.html())

    def text(self) -> str:
        """The text a reader sees: everything but dropped elements' content."""
        if self.tag in DROP_TAGS:
            return ""
        return "".join(child.text() if isinstance(child, Node) else child
                       for child in self.children)

    def size(self) -> int:
        return 1 + sum(child.size() for child in self.children if isinstance(child, Node))


# Scripts and styles hold raw text only: markup inside one is its text, and a nested
# "</style>" would end the outer one early, so they are generated as leaves.
RAW_TEXT = st.builds(Node, st.sampled_from(DROPPED), st.lists(TEXT, max_size=2))


def nodes(tags: list[str]):
    return st.recursive(
        st.one_of(TEXT, RAW_TEXT),
        lambda children: st.builds(Node, st.sampled_from(tags), st.lists(children, max_size=5)),
        max_leaves=30,
    )


TREES = st.builds(Node, st.just("div"), st.lists(nodes(INLINE + BLOCK + ["br"]),
                                                 min_size=1, max_size=6))


def visible(text: str) -> str:
    return "".join(text.split())  # whitespace may be collapsed or moved; nothing else


# One generated tree is checked for every property (generating trees is the slow part).
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TREES)
def test_cleaning_keeps_text_is_idempotent_allowlisted_and_linear(tree: Node):
    result = clean_html(tree.html())
    # never drops or adds text: every visible character, in order
    assert visible(html_text(result.html)) == visible(tree.text()), tree.html()
    # a fixed point
    assert clean_html(result.html).html == result.html
    if result.html:
        assert_safe_html(result.html)
        assert set(re.findall(r"</?([a-z0-9]+)", result.html)) <= ALLOWED_TAGS
    # linear: two walks of two events per element, html/body, one step per written tag
    assert result.steps <= 5 * (tree.size() + 3)


def wide(count: int) -> str:
    return "<div>" + "".join(f"<p>Paragraph {i} with <b>bold</b> text.</p>"
                             for i in range(count)) + "</div>"


def deep(depth: int) -> str:
    return "<div><span>" * depth + "bottom" + "</span></div>" * depth


@settings(max_examples=12, deadline=None)
@given(st.integers(min_value=10, max_value=1500))
def test_wide_containers_cost_the_same_per_child(count: int):
    # The shape that was quadratic: many sibling paragraphs in one <div>.
    small, large = clean_html(wide(count)), clean_html(wide(2 * count))
    assert large.steps <= 2 * small.steps + 10
    assert large.steps <= 8 * (3 * 2 * count + 3)
    assert large.html.count("<p>") == 2 * count


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=10, max_value=900))
def test_deep_trees_cost_the_same_per_level(depth: int):
    small, large = clean_html(deep(depth)), clean_html(deep(2 * depth))
    assert large.steps <= 2 * small.steps + 10
    assert large.html == small.html == "<p>bottom</p>"


def test_deeper_than_the_parser_allows_falls_back_to_text():
    # 2048 levels is libxml2's limit even with huge_tree: the text still comes through.
    result = clean_html(deep(3000) + "<script>alert(1)</script><p>after &amp; more</p>")
    assert result.fell_back
    assert result.html == "<p>bottom after &amp; more</p>"
    assert clean_html(result.html).html == result.html
    assert result.steps < 100  # regex scans, not one step per level


def test_a_stray_angle_bracket_run_stays_linear_in_the_fallback():
    text = "<" * 50_000 + "x"
    result = clean_html(("<div>" * 3000) + text)
    assert "x" in result.html and result.steps < 100
