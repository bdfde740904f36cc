"""Applications of one process share their compiled templates (repository.web.template_code), and an edited
template is compiled afresh."""

from __future__ import annotations

from unittest.mock import patch

from jinja2 import DictLoader, Environment

from repository.web.template_code import ProcessBytecodeCache


def test_a_second_environment_loads_the_code_the_first_compiled() -> None:
    cache = ProcessBytecodeCache()
    sources = {"page.html": "Hello {{ name }}"}
    first = Environment(loader=DictLoader(sources), bytecode_cache=cache)
    assert first.get_template("page.html").render(name="a") == "Hello a"
    second = Environment(loader=DictLoader(sources), bytecode_cache=cache)
    with patch.object(second, "compile", wraps=second.compile) as compile_source:
        assert second.get_template("page.html").render(name="b") == "Hello b"
    compile_source.assert_not_called()  # loaded from the cache


def test_an_edited_template_is_compiled_again() -> None:
    cache = ProcessBytecodeCache()
    assert Environment(loader=DictLoader({"p": "one"}), bytecode_cache=cache).get_template("p").render() == "one"
    assert Environment(loader=DictLoader({"p": "two"}), bytecode_cache=cache).get_template("p").render() == "two"


def test_the_apps_use_the_process_cache(app) -> None:  # type: ignore[no-untyped-def]
    from repository.web.template_code import TEMPLATE_CODE

    assert app.jinja_env.bytecode_cache is TEMPLATE_CODE
