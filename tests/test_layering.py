"""The layering of the code (docs/architecture/index.md#package-order), read from the source with `ast`.

Nothing is imported: a module that is never loaded by the other tests is checked all the same, and a rule broken
inside a function body (a lazy import) is found too. The rules:

- `serializers/` imports nothing of `repository/` (pure functions record -> bytes) but the link builder
  `repository/urls.py`, a leaf that joins strings;
- `repository/storage/` imports no domain module, only the basics in STORAGE_MAY_IMPORT;
- the views (`repository/api/`, the web pages `repository/pages/`) import no `sqlalchemy` and no `repository.storage.tables`: their queries live in
  the domain packages;
- nothing in `repository/`, `serializers/` or `scripts/` imports `app` (the WSGI entry point is a leaf);
- no import cycle among the modules of `repository/` and `serializers/` at module level, and no function-local
  import that would close one, but those listed with their reason in DEFERRED_CYCLE_IMPORTS;
- the packages in one order (PACKAGE_ORDER): a package imports only packages of lower tiers, deferred imports and
  `TYPE_CHECKING` ones included, so there is no loop between packages either;
- only the web layer (`repository/web/`, `api/`, `pages/`, `serving/`, the entry points) imports Flask: domain code
  works on values and never reads the request.

An import `from a.b import c` is an edge to the module `a.b.c` when that is a module, else to `a.b`; the
package `__init__` Python runs on the way is not counted (as import-linter and pydeps do), so a package that
re-exports its submodules is no cycle with them.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("repository", "serializers")

# What storage may use besides itself: leaves that import nothing of the repository (checked below), so storage
# stays the bottom layer: settings (engine options), the error classes (library errors mapped once) and the clock.
STORAGE_MAY_IMPORT = frozenset({"repository.config", "repository.errors", "repository.timeutil"})
# What the serializers may use of the repository: the one place every URL the service hands out is built.
SERIALIZERS_MAY_IMPORT = frozenset({"repository.urls"})

# The packages bottom up. A package may import any package of a lower tier, none of its own tier or above. Modules
# directly under `repository/` count as packages of their own.
PACKAGE_ORDER: tuple[tuple[str, ...], ...] = (
    ("repository.urls",),  # the link builder: joins strings, imports nothing
    ("serializers", "repository.timeutil", "repository.jsonlimits", "repository.ondemand", "repository.collector"),  # pure, import nothing
    ("repository.config", "repository.errors"),
    ("repository.storage",),
    ("repository.accounts", "repository.outbox", "repository.paging", "repository.registrar", "repository.search"),
    ("repository.files", "repository.site", "repository.vocabularies"),
    ("repository.communities", "repository.datadesc", "repository.metadata"),
    ("repository.records",),
    ("repository.deposits", "repository.oai"),
    ("repository.releases", "repository.worker", "repository.exports", "repository.imports"),  # the background work, over every domain package
    ("repository.backup", "repository.services"),
    ("repository.web",),  # HTTP: the request, errors as responses, rate limits, downloads
    ("repository.api", "repository.pages", "repository.serving"),
    ("repository.cli", "app"),
    ("repository.__main__",),
)
# Where Flask may be imported: the web layer and the entry points.
WEB_LAYER = ("repository.web", "repository.api", "repository.pages", "repository.serving", "repository.cli", "app")

# Deferred imports (inside a function, or under `if TYPE_CHECKING:`) that would close an import cycle if they ran at
# load, each with its reason. A new entry needs a reason that holds: a cycle is better broken by moving code.
DEFERRED_CYCLE_IMPORTS: dict[tuple[str, str], str] = {
}


@dataclass(frozen=True)
class Import:
    """One import statement's target module, where it is, and whether it runs when the module is loaded."""

    source: str  # importing module, dotted
    target: str  # imported module, dotted (the most specific module the statement names)
    line: int
    module_level: bool  # runs when the module is loaded: not inside a function, not under `if TYPE_CHECKING:`

    def __str__(self) -> str:
        return f"{self.source}:{self.line} imports {self.target}{'' if self.module_level else ' (deferred)'}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def project_modules() -> dict[str, Path]:
    """Every module of the packages and `app`, by dotted name (migrations included: they are code too)."""
    found = {module_name(path): path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))}
    found["app"] = ROOT / "app.py"
    return found


def _resolve(source: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module of a `from ... import` (relative ones resolved against `source`)."""
    if not node.level:
        return node.module or ""
    base = source.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _targets(source: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    module = _resolve(source, is_package, node)
    for alias in node.names:
        candidate = f"{module}.{alias.name}"
        yield candidate if candidate in project_modules() else module


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


class _Collector(ast.NodeVisitor):
    """The imports of one module, marking the deferred ones: inside a function (they run when it is called) or
    under `if TYPE_CHECKING:` (they never run; only a type checker reads them)."""

    def __init__(self, source: str, is_package: bool) -> None:
        self.source, self.is_package = source, is_package
        self.deferred = 0
        self.found: dict[tuple[str, int], Import] = {}

    def _deferring(self, node: ast.AST) -> None:
        self.deferred += 1
        self.generic_visit(node)
        self.deferred -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _deferring

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking(node.test):
            self.generic_visit(node)
            return
        self.deferred += 1
        for child in node.body:
            self.visit(child)
        self.deferred -= 1
        for child in node.orelse:
            self.visit(child)

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        for target in _targets(self.source, self.is_package, node):
            self.found[target, node.lineno] = Import(self.source, target, node.lineno, self.deferred == 0)

    visit_Import = visit_ImportFrom = _import


@functools.cache
def imports_of(source: str) -> tuple[Import, ...]:
    path = project_modules()[source]
    collector = _Collector(source, path.name == "__init__.py")
    collector.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return tuple(collector.found.values())


def imports_under(*prefixes: str) -> Iterator[Import]:
    """Every import made by the modules named by or under `prefixes`."""
    for name in project_modules():
        if any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes):
            yield from imports_of(name)


def within(target: str, *prefixes: str) -> bool:
    return any(target == prefix or target.startswith(prefix + ".") for prefix in prefixes)


def test_serializers_import_nothing_of_the_repository() -> None:
    assert [str(i) for i in imports_under("serializers")
            if within(i.target, "repository", "app") and not within(i.target, *SERIALIZERS_MAY_IMPORT)] == []


def test_the_link_builder_is_a_leaf() -> None:
    """It imports nothing of the project, so the serializers' allowance reaches no further."""
    assert [str(i) for i in imports_under(*SERIALIZERS_MAY_IMPORT) if within(i.target, *PACKAGES, "app")] == []


@pytest.mark.slow
def test_storage_imports_no_domain_module() -> None:
    allowed = ("repository.storage", *STORAGE_MAY_IMPORT)
    assert [str(i) for i in imports_under("repository.storage")
            if within(i.target, "repository", "app") and not within(i.target, *allowed)] == []  # fmt: skip


def test_the_basics_storage_may_import_are_leaves() -> None:
    """Otherwise the allowance would let storage reach the domain through them."""
    assert [str(i) for i in imports_under(*STORAGE_MAY_IMPORT) if within(i.target, "repository", "app")] == []


def test_views_hold_no_sql() -> None:
    forbidden = ("sqlalchemy", "repository.storage.tables")
    assert [str(i) for i in imports_under("repository.api", "repository.pages") if within(i.target, *forbidden)] == []


@pytest.mark.slow
def test_nothing_imports_app() -> None:
    """The scripts and the benchmark tooling start from `build_services`, not from the web application."""
    found = [str(i) for i in imports_under(*PACKAGES) if within(i.target, "app")]
    for path in sorted(path for folder in ("scripts", "bench") for path in (ROOT / folder).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found += [f"{module_name(path)}:{node.lineno} imports app" for node in ast.walk(tree)
                  if (isinstance(node, ast.Import) and any(a.name == "app" for a in node.names))
                  or (isinstance(node, ast.ImportFrom) and node.module == "app" and not node.level)]  # fmt: skip
    assert found == []


def _graph() -> dict[str, set[str]]:
    """Module-level import edges among the project modules."""
    graph: dict[str, set[str]] = {name: set() for name in project_modules()}
    for name in project_modules():
        for i in imports_of(name):
            if i.module_level and i.target in graph and i.target != name:
                graph[name].add(i.target)
    return graph


def reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    """Whether module-level imports lead from `start` to `goal`."""
    seen, todo = {start}, [start]
    while todo:
        for child in graph[todo.pop()] - seen:
            if child == goal:
                return True
            seen.add(child)
            todo.append(child)
    return start == goal


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


@pytest.mark.slow  # 0.4 s and more of work
def test_no_import_cycles() -> None:
    assert cycles(_graph()) == []


def deferred_imports_closing_a_cycle() -> list[tuple[str, str]]:
    """Deferred imports whose target imports (at load, through any chain) the module that defers them."""
    graph = _graph()
    return sorted({(i.source, i.target) for name in project_modules() for i in imports_of(name)
                   if not i.module_level and i.target in graph and reaches(graph, i.target, i.source)})  # fmt: skip


def test_deferred_imports_close_no_cycle() -> None:
    """A deferred import that would be a cycle at load hides one; only the listed ones, with a reason."""
    assert deferred_imports_closing_a_cycle() == sorted(DEFERRED_CYCLE_IMPORTS)


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set()}, []),
    ],
)
def test_cycles_finds_what_it_should(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert cycles(graph) == expected


def package_of(module: str) -> str:
    """`repository.<first part>`, or the top-level name (`serializers`, `app`)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "repository" and len(parts) > 1 else parts[0]


def test_every_package_has_its_place_in_the_order() -> None:
    placed = [name for tier in PACKAGE_ORDER for name in tier]
    assert len(placed) == len(set(placed))
    assert sorted({package_of(name) for name in project_modules()} - {"repository"} - set(placed)) == []


def test_packages_import_only_lower_tiers() -> None:
    tier = {name: number for number, names in enumerate(PACKAGE_ORDER) for name in names}
    found = []
    for name in project_modules():
        source = package_of(name)
        for i in imports_of(name):
            target = package_of(i.target)
            if target in tier and source in tier and target != source and tier[target] >= tier[source]:
                found.append(str(i))
    assert found == []


def test_only_the_web_layer_imports_flask() -> None:
    assert [str(i) for i in imports_under(*PACKAGES) if within(i.target, "flask", "flask_wtf", "flask_limiter", "flask_compress")
            and not within(i.source, *WEB_LAYER)] == []
