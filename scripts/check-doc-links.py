#!/usr/bin/env python3
"""Checks every link and image in the repository's Markdown.

Usage: check-doc-links.py [ROOT]

Reads ROOT/README.md and every ROOT/docs/**/*.md (ROOT defaults to the
repository this script is in) and checks each Markdown link and image
(inline `[text](target)`, reference definitions `[label]: target`, autolinks
`<https://...>`, and `href`/`src` of inline HTML), outside code blocks and
code spans:

- a relative target must name a file or folder that exists inside ROOT; a
  target that leaves ROOT (`../elsewhere`, an absolute file system path,
  `file:`) is broken even if it exists;
- a `#fragment` must be the anchor of a heading of the target Markdown file
  (or of the file itself for `#fragment` alone), as GitHub makes them:
  lowercase, punctuation other than `-` and `_` removed, each space turned
  into `-`, `-1`, `-2`, ... appended to repeats; a non-Markdown target takes
  only line anchors (`#L10`, `#L10-L20`);
- an http(s) link must go to one of a few well-known sites (ALLOWED_HOSTS);
  nothing is fetched;
- `[text][label]` must use a label that is defined.

Prints `FILE:LINE: broken link 'TARGET' (REASON)` for each broken link, then
`N links checked, M broken`; exits 1 if any link is broken, 0 otherwise.
"""
import os
import re
import sys
import unicodedata
import urllib.parse

# Sites a document may link to without the link being fetched: the projects
# Tandem builds on and the formats it reads and writes.
ALLOWED_HOSTS = {
    "github.com", "llvm.org", "mlir.llvm.org", "pytorch.org",
    "docs.pytorch.org", "numpy.org", "docs.python.org", "huggingface.co",
    "docs.nvidia.com", "developer.nvidia.com", "graphviz.org", "perfetto.dev",
    "en.wikipedia.org", "pypi.org",
}


def markdown_files(root):
    files = []
    readme = os.path.join(root, "README.md")
    if os.path.isfile(readme):
        files.append(readme)
    docs = os.path.join(root, "docs")
    for folder, subfolders, names in os.walk(docs):
        subfolders.sort()
        for name in sorted(names):
            if name.endswith(".md"):
                files.append(os.path.join(folder, name))
    return files


FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def mask(text):
    """The text with fenced code blocks, code spans and HTML comments
    replaced by spaces (newlines kept, so offsets and line numbers hold)."""
    def blank(chunk):
        return re.sub(r"[^\n]", " ", chunk)

    lines = text.split("\n")
    out = []
    fence = None
    for line in lines:
        opening = FENCE.match(line)
        if fence is None and opening:
            fence = opening.group(1)
            out.append(blank(line))
        elif fence is not None:
            closing = FENCE.match(line)
            if (closing and closing.group(1)[0] == fence[0]
                    and len(closing.group(1)) >= len(fence)
                    and not line.strip().strip(fence[0])):
                fence = None
            out.append(blank(line))
        else:
            out.append(line)
    text = "\n".join(out)
    text = re.sub(r"<!--.*?-->", lambda m: blank(m.group(0)), text,
                  flags=re.DOTALL)
    # Code spans: a run of N backticks up to the next run of exactly N.
    result = []
    at = 0
    for run in re.finditer(r"`+", text):
        if run.start() < at:
            continue
        ticks = run.group(0)
        closing = re.compile(r"(?<!`)" + ticks + r"(?!`)")
        end = closing.search(text, run.end())
        # A code span does not cross a blank line (a paragraph break).
        if not end or "\n\n" in text[run.end():end.start()]:
            continue
        result.append(text[at:run.start()])
        result.append(blank(text[run.start():end.end()]))
        at = end.end()
    result.append(text[at:])
    return "".join(result)


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: text
    text = re.sub(r"<[^>]+>", "", text)                          # HTML tags
    text = text.lower()
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if char in "-_ " or category[0] in "LNM":
            kept.append(char)
    return "".join(kept).replace(" ", "-")


def anchors(path, cache={}):
    """Every anchor of a Markdown file: its headings' slugs (with GitHub's
    -1, -2 suffixes for repeats) and explicit `id`/`name` attributes."""
    if path in cache:
        return cache[path]
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    found = set()
    seen = {}

    def add(base):
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")

    in_fence = None
    lines = raw.split("\n")
    for index, line in enumerate(lines):
        opening = FENCE.match(line)
        if in_fence is None and opening:
            in_fence = opening.group(1)
            continue
        if in_fence is not None:
            if (opening and opening.group(1)[0] == in_fence[0]
                    and len(opening.group(1)) >= len(in_fence)
                    and not line.strip().strip(in_fence[0])):
                in_fence = None
            continue
        atx = re.match(r"^ {0,3}#{1,6}(?:\s+(.*?))?\s*$", line)
        if atx:
            heading = re.sub(r"\s+#+\s*$", "", atx.group(1) or "")
            add(slug(heading))
        elif (index + 1 < len(lines) and line.strip()
              and re.match(r"^ {0,3}(=+|-+)\s*$", lines[index + 1])
              and not re.match(r"^ {0,3}([-*+]|\d+[.)])\s", line)):
            add(slug(line.strip()))
        for attribute in re.finditer(r"""<[^>]*\b(?:id|name)\s*=\s*["']([^"']+)["']""",
                                     line):
            found.add(attribute.group(1))
    cache[path] = found
    return found


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def find_links(text):
    """(offset, target) of each link of the masked text, and the labels its
    reference-style links use: (offset, label)."""
    links = []
    references = []
    definitions = {}
    # Reference definitions: `[label]: target`.
    for match in re.finditer(r"(?m)^ {0,3}\[([^\]]+)\]:[ \t]*<?([^\s>]*)>?", text):
        definitions[match.group(1).strip().lower()] = match.group(2)
        links.append((match.start(2), match.group(2)))
    defined_spans = [m.span() for m in
                     re.finditer(r"(?m)^ {0,3}\[[^\]]+\]:.*$", text)]

    def in_definition(offset):
        return any(start <= offset < end for start, end in defined_spans)

    # Inline links and images: `[text](target "title")`; the text may hold
    # brackets (an image inside a link) and wrap across lines.
    at = 0
    while True:
        start = text.find("[", at)
        if start < 0:
            break
        at = start + 1
        if in_definition(start) or (start > 0 and text[start - 1] == "\\"):
            continue
        depth = 0
        end = start
        while end < len(text):
            if text[end] == "\\":
                end += 2
                continue
            if text[end] == "[":
                depth += 1
            elif text[end] == "]":
                depth -= 1
                if depth == 0:
                    break
            elif text[end] == "\n" and text[end + 1:end + 2] == "\n":
                end = len(text)  # no link across a paragraph break
                break
            end += 1
        if end >= len(text):
            continue
        after = text[end + 1:]
        inline = re.match(r"\(\s*(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
                          r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)", after)
        if inline:
            target = inline.group(1)
            if target.startswith("<") and target.endswith(">"):
                target = target[1:-1]
            links.append((end + 1 + inline.start(1), target))
            continue
        full = re.match(r"\[([^\]]*)\]", after)
        if full:
            label = full.group(1) or text[start + 1:end]
            references.append((start, " ".join(label.split()).lower()))
            at = end + 1 + full.end()
    # Autolinks and HTML attributes.
    for match in re.finditer(r"<((?:https?|ftp|file|mailto):[^>\s]*)>", text):
        links.append((match.start(1), match.group(1)))
    for match in re.finditer(r"""<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*["']([^"']*)["']""",
                             text, flags=re.IGNORECASE):
        links.append((match.start(1), match.group(1)))
    # Bare URLs in prose (GitHub makes them links too).
    for match in re.finditer(r"(?<![<(\"'=\w])(https?://[^\s<>()\[\]`]+)", text):
        links.append((match.start(1), match.group(1).rstrip(".,;:!?")))
    broken_references = [(offset, label) for offset, label in references
                         if label not in definitions]
    return sorted(set(links)), broken_references


def within(path, root):
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def check_target(source, target, root):
    """None if the link is good, else the reason it is broken."""
    if not target:
        return "empty target"
    parsed = urllib.parse.urlsplit(target)
    if parsed.scheme in ("http", "https"):
        host = (parsed.hostname or "").lower()
        if host.startswith("www."):
            host = host[4:]
        if host in ALLOWED_HOSTS:
            return None
        return f"external site '{host}' is not on the allow-list"
    if parsed.scheme == "file":
        return "leaves the repository (file: URL)"
    if parsed.scheme or parsed.netloc:
        return f"'{parsed.scheme or parsed.netloc}' links are not allowed"
    path = urllib.parse.unquote(parsed.path)
    fragment = urllib.parse.unquote(parsed.fragment)
    if path:
        if path.startswith("/"):
            # GitHub reads a leading / as the repository's root; a file system
            # path outside it is the common mistake.
            resolved = os.path.normpath(os.path.join(root, path.lstrip("/")))
            if not os.path.exists(resolved):
                return "absolute path: not a file of the repository"
        else:
            resolved = os.path.normpath(
                os.path.join(os.path.dirname(source), path))
        if not within(resolved, root) or not within(os.path.realpath(resolved),
                                                    os.path.realpath(root)):
            return "leaves the repository"
        if not os.path.exists(resolved):
            return "no such file or directory"
    else:
        resolved = source
    if parsed.fragment == "" and "#" not in target:
        return None
    if os.path.isdir(resolved):
        return f"anchor '#{fragment}' on a directory"
    if not resolved.endswith(".md"):
        if re.fullmatch(r"L\d+(-L\d+)?", fragment):
            return None
        return f"anchor '#{fragment}' on a file that is not Markdown"
    if fragment not in anchors(resolved):
        return (f"no heading with anchor '#{fragment}' in "
                f"{os.path.relpath(resolved, root)}")
    return None


def main():
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 0 if len(sys.argv) == 2 else 2
    root = sys.argv[1] if len(sys.argv) == 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    root = os.path.abspath(root)
    if not os.path.isdir(root):
        print(f"check-doc-links: error: '{root}' is not a folder", file=sys.stderr)
        return 2
    checked = 0
    broken = 0
    for source in markdown_files(root):
        with open(source, encoding="utf-8") as f:
            text = mask(f.read())
        name = os.path.relpath(source, root)
        links, undefined = find_links(text)
        problems = []
        for offset, target in links:
            checked += 1
            reason = check_target(source, target, root)
            if reason:
                problems.append((line_of(text, offset), target, reason))
        for offset, label in undefined:
            checked += 1
            problems.append((line_of(text, offset), label,
                             "undefined reference label"))
        for line, target, reason in sorted(problems):
            print(f"{name}:{line}: broken link '{target}' ({reason})")
            broken += 1
    print(f"{checked} links checked, {broken} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
