"""Check that every code name a documentation page mentions exists in the repository.

    python docs/check_names.py                        # docs/architecture.md
    python docs/check_names.py docs/arena.md README.md

A page names code in backticks. This script reads every backticked token outside fenced
blocks and checks it against the source tree:

- a path (`metanim/arena/_run.py`, `scripts/trace_run.py`, `tests/arena/test_play.py`, or a
  folder) exists;
- a dotted name from the package root (`metanim.records.run_identity`) imports;
- any other code name (`play_episode`, `Run.execute`, `Game.child`, `REPLY_PARSER`): its
  first part is defined or imported at the top level of a module (a function, class or
  assignment), and the parts after it are attributes of that object once imported; a
  plain name may also be a string the code spells (a status, a field, an environment
  variable such as `OPENAI_API_KEY`);
  in a table row or a list item that names module paths, the first part must be found
  in one of those modules (or the packages they name), so a name cannot silently move
  to another module while the row still points at the old one;
- a test name (`test_...`) is a function in the test files the row names (or any).

Tokens that are not code (flags, commands, file patterns, quoted values such as
`"win"`, single lowercase words) are skipped. Relative Markdown links must point at
files that exist. With no argument it also checks every citation of the page in the code
(`docs/architecture.md, "What a run never does"`): each quoted section is a heading of
the page. Exits 1 and prints one line per problem, else prints that every name exists.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "metanim"
PATH_ROOTS = ("metanim", "scripts", "tests", "docs", ".ci")
FILES = (".md", ".json", ".jsonl", ".html", ".png", ".toml", ".yaml", ".txt", ".lock")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def top_level_names(tree: ast.Module) -> set[str]:
    """Names a module binds at its top level: defs, classes, assignments, imports."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def class_members(tree: ast.Module) -> set[str]:
    """Methods, declared fields and `self.x` attributes of the classes in a module."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for member in node.body:
            if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(member.name)
            elif isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name):
                names.add(member.target.id)
        for inner in ast.walk(node):
            if (
                isinstance(inner, ast.Attribute)
                and isinstance(inner.ctx, ast.Store)
                and isinstance(inner.value, ast.Name)
                and inner.value.id == "self"
            ):
                names.add(inner.attr)
    return names


class Source:
    """The package's modules and the test files, indexed once."""

    def __init__(self) -> None:
        self.modules: dict[str, set[str]] = {}  # dotted module -> top-level names
        self.tests: dict[str, set[str]] = {}  # test file path -> test function names
        self.strings: dict[str, set[str]] = {}  # dotted module -> its string constants
        self.members: dict[str, set[str]] = {}  # dotted module -> its classes' members
        for path in sorted(PACKAGE.rglob("*.py")):
            tree = ast.parse(path.read_text())
            self.modules[module_name(path)] = top_level_names(tree)
            self.members[module_name(path)] = class_members(tree)
            self.strings[module_name(path)] = {
                n.value
                for n in ast.walk(tree)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            }
        for path in sorted((ROOT / "tests").rglob("test_*.py")):
            tree = ast.parse(path.read_text())
            self.tests[str(path.relative_to(ROOT))] = {
                n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
            }

    def resolve(self, module: str, attrs: list[str]) -> bool:
        """Whether `module` imports and `attrs` are attributes of it, one after another."""
        try:
            obj = importlib.import_module(module)
        except ImportError:
            return False
        for attr in attrs:
            if hasattr(obj, attr):
                obj = getattr(obj, attr)
            elif attr in _fields(obj):
                obj = None  # a declared field: its value has no attributes to follow
            else:
                return False
        return True

    def defines(self, dotted: str, scope: list[str]) -> bool:
        """Whether code name `dotted` exists in one of the modules `scope` (or anywhere)."""
        head, *attrs = dotted.split(".")
        if not attrs and head in dir(builtins):
            return True
        modules = [m for m in self.modules if not scope or any(_within(m, s) for s in scope)]
        # `episodes.play_episode`: a module named by its last part, then names in it.
        if attrs and any(m.rsplit(".", 1)[-1] == head and self.resolve(m, attrs) for m in modules):
            return True
        if not head.startswith("metanim") and attrs and self.resolve(head, attrs):
            return True  # a third-party name written from its package: `scipy.stats.binomtest`
        if any(head in self.modules[m] and self.resolve(m, [head, *attrs]) for m in modules):
            return True
        # A method or field of a class (`validate_state`), or a value the code spells as
        # a string (a status, a log field, an environment variable).
        return not attrs and any(head in self.members[m] | self.strings[m] for m in modules)


def _fields(obj: object) -> set[str]:
    """The declared fields of a pydantic model or dataclass (not class attributes)."""
    fields = set(getattr(obj, "model_fields", {}) or {})
    fields |= set(getattr(obj, "__dataclass_fields__", {}) or {})
    for klass in getattr(obj, "__mro__", ()):
        fields |= set(getattr(klass, "__annotations__", {}))
    return fields


def _within(module: str, scope: str) -> bool:
    return module == scope or module.startswith(scope + ".")


def blocks(text: str) -> Iterator[tuple[int, str, bool]]:
    """(first line number, text, strict) of each table row, list item or paragraph,
    outside fenced blocks; strict for rows and items (they scope names to their paths)."""
    fenced = False
    current: list[str] = []
    start = 0
    strict = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        stripped = line.strip()
        item = stripped.startswith("|") or re.match(r"^([-*]|\d+\.)\s", stripped)
        if not stripped or item or stripped.startswith("#"):
            if current:
                yield start, " ".join(current), strict
            current, start, strict = [], number, bool(item)
            if not stripped:
                continue
        if not current:
            start = number
        current.append(stripped)
    if current:
        yield start, " ".join(current), strict


def path_of(token: str) -> Path | None:
    """The repository path a token names, if it names one."""
    token = token.split("::")[0].rstrip("/")
    if "<" in token or "*" in token or " " in token:
        return None
    first = token.split("/")[0]
    if first in PATH_ROOTS and ("/" in token or token.endswith(".py")):
        return ROOT / token
    if "/" not in token and token.endswith(".py"):
        # A bare file name (`kernels.py`): the package's file of that name, if one.
        found = sorted(PACKAGE.rglob(token))
        return found[0] if found else PACKAGE / token
    return None


def check(page: Path, source: Source) -> list[str]:
    problems: list[str] = []
    checked = 0
    text = page.read_text()
    for number, block, strict in blocks(text):
        tokens = re.findall(r"`([^`]+)`", block)
        scope: list[str] = []
        tests: list[str] = []
        for token in tokens:
            path = path_of(token)
            if path is None:
                continue
            checked += 1
            if not path.exists():
                problems.append(f"{page.name}:{number}: no such path {token}")
            elif path.is_relative_to(PACKAGE):
                scope.append(
                    module_name(path) if path.suffix == ".py" else module_name(path / "__init__.py")
                )
            elif token.startswith("tests/"):
                tests.append(token)
        for token in tokens:
            name = re.sub(r"\(.*\)$", "", token.strip())
            if path_of(token) is not None or not NAME.match(name) or name.endswith(FILES):
                continue
            if name.startswith("test_"):
                checked += 1
                files = [t for t in tests if t in source.tests] or list(source.tests)
                if not any(name in source.tests[f] for f in files):
                    problems.append(
                        f"{page.name}:{number}: no test {name} in {', '.join(tests) or 'tests/'}"
                    )
                continue
            if name.startswith("metanim."):
                checked += 1
                parts = name.split(".")
                found = any(
                    ".".join(parts[:i]) in source.modules
                    and source.resolve(".".join(parts[:i]), parts[i:])
                    for i in range(len(parts), 0, -1)
                )
                if not found:
                    problems.append(f"{page.name}:{number}: {name} does not import")
                continue
            # Code names only: a dot, an underscore or a capital; plain words are prose.
            if not ("." in name or "_" in name or name != name.lower()):
                continue
            checked += 1
            if source.defines(name, scope if strict else []):
                continue
            where = f" in {', '.join(scope)}" if strict and scope else ""
            problems.append(f"{page.name}:{number}: {name} not found{where}")
    for number, line in enumerate(text.splitlines(), start=1):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", line):
            if "://" in target:
                continue
            checked += 1
            if not (page.parent / target).exists():
                problems.append(f"{page.name}:{number}: link to a missing file {target}")
    print(f"{page.relative_to(ROOT)}: {checked} names and paths checked", file=sys.stderr)
    return problems


def citations() -> list[str]:
    """Code that cites a section (`docs/architecture.md, "The layers"`) whose heading is
    missing from the page: the heading must start with the quoted words."""
    page = ROOT / "docs" / "architecture.md"
    headings = [h.strip() for h in re.findall(r"^#+ (.+)$", page.read_text(), re.M)]
    problems = []
    files = [*PACKAGE.rglob("*.py"), *(ROOT / "scripts").rglob("*.py"), ROOT / "pyproject.toml"]
    for path in sorted(files):
        # A citation may wrap: the quoted names run to the end of the parenthesis.
        text = re.sub(r"\s*\n\s*#?\s*", " ", path.read_text())
        for cited in re.findall(r"docs/architecture\.md,([^)]*)\)", text):
            for name in re.findall(r'"([^"]+)"', cited):
                if not any(h == name or h.startswith(name + ":") for h in headings):
                    problems.append(f"{path.relative_to(ROOT)}: cites a missing section {name!r}")
    return problems


def packages_named() -> list[str]:
    """What the page's layer and integration sections must name: the count of packages
    (a folder of `metanim` with an `__init__.py`), and every public integration (a module
    or subpackage of `metanim/integrations/` without a leading underscore) by its path in
    the integrations section."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    problems = []
    count = sum(1 for d in PACKAGE.iterdir() if (d / "__init__.py").is_file())
    words = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
             "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen")  # fmt: skip
    said = re.search(r"`metanim` is (\w+) packages", page)
    if said is None or said.group(1) not in {str(count), *words[count : count + 1]}:
        problems.append(
            f"docs/architecture.md: 'The layers' must say `metanim` is {count} packages"
        )
    section = re.search(r"^### integrations\n(.*?)^#", page, re.M | re.S)
    text = section.group(1) if section else ""
    folder = PACKAGE / "integrations"
    for each in sorted(folder.iterdir()):
        if each.name.startswith("_") or not (
            each.suffix == ".py" or (each / "__init__.py").is_file()
        ):
            continue
        path = f"metanim/integrations/{each.name}{'/' if each.is_dir() else ''}"
        if f"`{path}`" not in text:
            problems.append(f"docs/architecture.md: the integrations section omits `{path}`")
    return problems


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    source = Source()
    pages = [Path(a).resolve() for a in argv] or [ROOT / "docs" / "architecture.md"]
    problems = [p for page in pages for p in check(page, source)]
    if not argv:
        problems += citations() + packages_named()
    print("\n".join(problems) if problems else "every name exists")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
