"""Description HTML cleanup in linear time: one libxml2 parse, two passes, no mutation.

The allowlist is small (paragraphs, lists, headings, emphasis, line breaks, http(s)/mailto
links). The parse is lxml's (libxml2 2.14 tokenizes as HTML5 does); the tree is then read
twice and never edited:

1. post-order (reversed document order, so children come first): what each element
   becomes — kept, unwrapped (its content stays, its tag goes), turned into a paragraph,
   or dropped with its content (scripts, styles, embeds, empty paragraphs);
2. document order: the kept tags and the escaped text are written to one list.

Editing the tree instead (BeautifulSoup's ``unwrap``) costs O(siblings) per edit, which is
quadratic on the most common real shape: hundreds of paragraphs inside one ``<div>``.

The output is a fixed point: an element that may only hold inline content (``p``, headings,
emphasis, links) is unwrapped when its content holds a block, a list item directly inside
another list item and a link inside a link are unwrapped, and whitespace is collapsed
across the text that ends up adjacent. Cleaning the output again changes nothing.

A document nested deeper than libxml2 allows (2048 levels, never a real description)
falls back to its text: tags stripped, scripts and styles dropped, nothing else lost.
"""

from __future__ import annotations

import html
import re
import threading
from dataclasses import dataclass

from lxml import etree

ALLOWED_TAGS = frozenset(
    {"p", "ul", "ol", "li", "h1", "h2", "h3", "h4", "strong", "em", "b", "i", "br", "a"}
)
# Removed together with everything inside them.
DROP_TAGS = frozenset(
    {"script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "noscript",
     "template", "svg", "math", "form", "input", "button", "select", "option", "textarea",
     "head", "title", "meta", "link", "base", "img", "picture", "video", "audio", "source",
     "track", "canvas", "map", "area", "dialog", "hr"}
)
# Block containers: a paragraph when they hold only inline content, else unwrapped.
_BLOCKISH = frozenset(
    {"div", "section", "article", "header", "footer", "main", "aside", "blockquote", "pre",
     "figure", "figcaption", "address", "center", "details", "summary", "dl", "dt", "dd",
     "table", "thead", "tbody", "tfoot", "tr", "caption", "nav"}
)
_TRANSPARENT = frozenset({"html", "body"})
_CELLS = frozenset({"td", "th"})
_HEADINGS = {"h1": "h1", "h2": "h2", "h3": "h3", "h4": "h4", "h5": "h4", "h6": "h4"}
_EMPHASIS = frozenset({"strong", "em", "b", "i"})
_LISTS = frozenset({"ul", "ol"})
_SAFE_HREF = re.compile(r"^(https?:|mailto:)", re.IGNORECASE)

# What pass 1 decides for an element.
_DROP, _UNWRAP, _KEEP, _PARA, _CELL = range(5)


# What an element's output holds, as its parent sees it (bit flags).
_TEXT, _LINK, _BLOCK = 1, 2, 4


@dataclass
class CleanResult:
    html: str
    steps: int  # elements visited plus tags written: linear in the input's size
    fell_back: bool = False


_local = threading.local()


def _parser() -> etree.HTMLParser:
    # lxml parsers keep per-parse state: one per thread (cleaning runs in worker threads).
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = etree.HTMLParser(
            encoding="utf-8", remove_comments=True, remove_pis=True, no_network=True,
            huge_tree=True, default_doctype=False,
        )
        _local.parser = parser
    return parser


def _has_text(value: str | None) -> bool:
    # Unicode whitespace (a lone &nbsp; too) is no text: an element holding only that is
    # empty. str.isspace runs in C, which matters once per element.
    return bool(value) and not value.isspace()


_SPACE_WITH_BREAK = re.compile(r"[ \t\r\f]*\n[ \t\n\r\f]*")
_SPACES = re.compile(r"[ \t\r\f]+")


def _collapse(text: str) -> str:
    # A run of whitespace becomes one newline when it held a line break, else one space.
    return _SPACES.sub(" ", _SPACE_WITH_BREAK.sub("\n", text))


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _name(element) -> str | None:
    tag = element.tag
    return tag.lower() if isinstance(tag, str) else None  # comments, PIs, entities: None


def _safe_href(element) -> str | None:
    href = element.get("href")
    href = href.strip() if isinstance(href, str) else ""
    return href if _SAFE_HREF.match(href) else None


def _decide(name: str | None, element, content: int) -> tuple[int, int]:
    """Pass 1 for one element: its fate and what its output holds, given its content."""
    if name is None or name in DROP_TAGS:
        return _DROP, 0
    has_content = content & (_TEXT | _LINK)
    if name == "br":
        return _KEEP, 0
    if name == "a":
        if content & _BLOCK or _safe_href(element) is None:
            return _UNWRAP, content
        return _KEEP, (content & _TEXT) | _LINK
    if name in _EMPHASIS or name in _HEADINGS or name == "p":
        if not has_content:
            return _DROP, 0
        if content & _BLOCK:
            return _UNWRAP, content
        return _KEEP, content if name in _EMPHASIS else content | _BLOCK
    if name in _LISTS or name == "li":
        return (_KEEP, content | _BLOCK) if has_content else (_DROP, 0)
    if name in _BLOCKISH:
        if content & _BLOCK:
            return _UNWRAP, content
        return (_PARA, content | _BLOCK) if has_content else (_DROP, 0)
    if name in _CELLS:
        return _CELL, content
    return _UNWRAP, content  # html, body, span, font, u, unknown tags


def _plan(root) -> tuple[list[int], list[str], list[int], int]:
    """Each element's decision, name and subtree size, indexed in document order."""
    decisions: list[int] = []
    names: list[str] = []
    sizes: list[int] = []
    # One frame per open element: [its index, what its content holds so far].
    stack: list[list[int]] = []
    steps = 0
    for event, element in etree.iterwalk(root, events=("start", "end")):
        steps += 1
        if event == "start":
            stack.append([len(decisions), _TEXT if _has_text(element.text) else 0])
            decisions.append(_UNWRAP)
            names.append("")
            sizes.append(1)
            continue
        index, content = stack.pop()
        name = _name(element)
        decision, holds = _decide(name, element, content)
        decisions[index] = decision
        names[index] = name or ""
        sizes[index] = len(decisions) - index
        if stack:
            stack[-1][1] |= holds | (_TEXT if _has_text(element.tail) else 0)
    return decisions, names, sizes, steps


def _open_tag(name: str, element, decision: int) -> tuple[str, str]:
    if decision == _PARA:
        return "<p>", "</p>"
    if name == "br":
        return "<br/>", ""
    if name == "a":
        return f'<a href="{html.escape(_safe_href(element) or "", quote=True)}">', "</a>"
    tag = _HEADINGS.get(name, name)
    return f"<{tag}>", f"</{tag}>"


_NO_FRAME = ("", None, False, False)
_CELL_FRAME = ("", None, False, True)


def _write(root, decisions: list[int], names: list[str], sizes: list[int]) -> tuple[str, int]:
    """Pass 2. Text is buffered until the next tag, so text that meets across unwrapped
    or dropped elements is collapsed as one run."""
    parts: list[str] = []
    pending: list[str] = []

    def flush() -> None:
        parts.append(_escape(_collapse("".join(pending))))
        pending.clear()

    steps = 0
    # One frame per open element: (closing markup, pushed list context, is a link, is a cell).
    frames: list[tuple[str, str | None, bool, bool]] = []
    contexts: list[str] = []  # "li" / "list": the innermost kept list structure
    links_open = 0
    index = 0
    walker = etree.iterwalk(root, events=("start", "end"))
    for event, element in walker:
        steps += 1
        if event == "end":
            closing, context, is_link, is_cell = frames.pop()
            if closing:
                if pending:
                    flush()
                parts.append(closing)
            if context:
                contexts.pop()
            links_open -= is_link
            if is_cell:
                pending.append(" ")  # keep neighbouring table cells apart
            if element.tail:
                pending.append(element.tail)
            continue
        decision = decisions[index]
        if decision == _DROP:
            walker.skip_subtree()
            index += sizes[index]
            frames.append(_NO_FRAME)
            continue
        name = names[index]
        index += 1
        if decision == _KEEP and name == "li" and contexts and contexts[-1] == "li":
            decision = _UNWRAP  # a bare item inside an item would be re-parsed as a sibling
            pending.append(" ")
        if decision == _KEEP and name == "a" and links_open:
            decision = _UNWRAP  # a link inside a link would be re-parsed as a sibling
        if decision in (_KEEP, _PARA):
            opening, closing = _open_tag(name, element, decision)
            if pending:
                flush()
            parts.append(opening)
            context = "li" if name == "li" else "list" if name in _LISTS else None
            if context:
                contexts.append(context)
            frames.append((closing, context, name == "a", False))
            links_open += name == "a"
        else:
            frames.append(_CELL_FRAME if decision == _CELL else _NO_FRAME)
        if element.text:
            pending.append(element.text)
    if pending:
        flush()
    return "".join(parts).strip(), steps


def _too_deep(parser: etree.HTMLParser) -> bool:
    return any(entry.type_name == "ERR_RESOURCE_LIMIT" or "depth" in entry.message.lower()
               for entry in parser.error_log)


def clean_html(raw: str) -> CleanResult:
    """The allowlisted, escaped HTML of ``raw`` and how many steps it took."""
    if not raw or not raw.strip():
        return CleanResult("", 0)
    parser = _parser()
    try:
        root = etree.fromstring(raw.encode("utf-8", errors="replace"), parser)
    except etree.ParserError:  # nothing but whitespace or markup that yields no document
        root = None
    if root is None:
        return text_fallback(raw)
    if _too_deep(parser):
        return text_fallback(raw)
    decisions, names, sizes, planned = _plan(root)
    output, written = _write(root, decisions, names, sizes)
    return CleanResult(output, planned + written)


def sanitize_html(raw: str) -> str:
    return clean_html(raw).html


# --------------------------------------------------------------------------- fallback

_DROPPED_OPEN = re.compile(
    r"<(script|style|template|noscript|svg|math|iframe|textarea|title|head)\b[^<>]*>", re.I
)
# [^<>] (not [^>]) keeps a stray "<" from making the scan quadratic.
_ANY_TAG = re.compile(r"<[^<>]*>")


def _without_dropped(raw: str) -> tuple[str, int]:
    kept: list[str] = []
    position = steps = 0
    while True:
        opened = _DROPPED_OPEN.search(raw, position)
        steps += 1
        if opened is None:
            kept.append(raw[position:])
            return "".join(kept), steps
        kept.append(raw[position:opened.start()])
        closing = re.compile(rf"</{opened.group(1)}\s*>", re.I).search(raw, opened.end())
        if closing is None:
            return "".join(kept), steps
        position = closing.end()


def html_text(fragment: str | None) -> str:
    """The text of an HTML fragment, tags replaced by spaces (for reading a pay statement)."""
    return html.unescape(_ANY_TAG.sub(" ", fragment)) if fragment else ""


def text_fallback(raw: str) -> CleanResult:
    """Paragraphs of the document's text (tags stripped, scripts and styles dropped)."""
    visible, steps = _without_dropped(raw)
    text = html.unescape(_ANY_TAG.sub(" ", visible))
    lines = [line.strip() for line in _collapse(text).split("\n")]
    body = "<br/>".join(html.escape(line, quote=False) for line in lines if line)
    return CleanResult(f"<p>{body}</p>" if body else "", steps + len(lines), fell_back=True)
