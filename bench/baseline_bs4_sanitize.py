"""The BeautifulSoup description cleaner as it was before issue 16, kept only as the
benchmark baseline of bench/source_parsing.py (quadratic on a wide container: every
``unwrap`` is O(siblings)). Copied verbatim from backend/sources/normalize.py apart from
the imports; nothing in the product calls it.
"""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Comment, Doctype, Tag

ALLOWED_TAGS = frozenset(
    {"p", "ul", "ol", "li", "h1", "h2", "h3", "h4", "strong", "em", "b", "i", "br", "a"}
)
_DROP_TAGS = frozenset(
    {"script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "noscript",
     "template", "svg", "math", "form", "input", "button", "select", "option", "textarea",
     "head", "title", "meta", "link", "base", "img", "picture", "video", "audio", "source",
     "track", "canvas", "map", "area", "dialog"}
)
# Block containers: become a paragraph when they hold only inline content, else unwrapped.
_BLOCKISH = frozenset(
    {"div", "section", "article", "header", "footer", "main", "aside", "blockquote", "pre",
     "figure", "figcaption", "address", "center", "details", "summary", "dl", "dt", "dd",
     "table", "thead", "tbody", "tfoot", "tr", "caption", "nav", "body", "html", "hr"}
)
_BLOCK_CHILDREN = ALLOWED_TAGS - {"strong", "em", "b", "i", "br", "a"} | _BLOCKISH | {"h5", "h6"}
_SAFE_HREF = re.compile(r"^(https?:|mailto:)", re.IGNORECASE)




def sanitize_html(raw: str) -> str:
    """Keep only the allowlisted tags (and ``href`` on links to http(s)/mailto); drop
    scripts, styles, embedded content, comments and every other attribute. Text is
    re-serialized from the parse tree, so whatever survives is escaped."""
    soup = BeautifulSoup(raw, "html.parser")
    for node in soup.find_all(string=lambda s: isinstance(s, Comment | Doctype)):
        node.extract()
    for tag in soup.find_all(list(_DROP_TAGS)):
        tag.decompose()
    for tag in soup.find_all(True):
        if tag.decomposed:
            continue
        name = tag.name.lower()
        if name in ("h5", "h6"):
            tag.name, name = "h4", "h4"
        if name in ALLOWED_TAGS:
            href = tag.get("href") if name == "a" else None
            tag.attrs = {}
            if name == "a":
                href = href.strip() if isinstance(href, str) else ""
                if _SAFE_HREF.match(href):
                    tag.attrs["href"] = href
                else:
                    tag.unwrap()
            continue
        if name in _BLOCKISH and name not in ("body", "html", "hr"):
            holds_blocks = any(
                isinstance(child, Tag) and child.name.lower() in _BLOCK_CHILDREN
                for child in tag.children
            )
            if not holds_blocks:
                tag.name, tag.attrs = "p", {}
                continue
        if name in ("td", "th"):
            tag.insert_after(" ")
        tag.unwrap()
    for tag in soup.find_all(["p", "li", "h1", "h2", "h3", "h4", "strong", "em", "b", "i"]):
        if not tag.get_text(strip=True) and not tag.find("a"):
            tag.decompose()
    return re.sub(r"\n{3,}", "\n\n", str(soup)).strip()
