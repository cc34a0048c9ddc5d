"""Reading Nessie's authorization rules: Java's .properties syntax, and a bad file or rule stopping
``lochkit serve`` at start-up with the file, line, rule and problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from lochkit.cli import main
from persist_spi.versionstore.content import ContentKey
from rest_server.authorization import Check, Op, RulesError, load_rules, rules_from_properties
from rest_server.java_properties import PropertiesError, parse_properties
from rest_server.principal import Principal


def _pairs(text: str) -> dict[str, str]:
    return {p.key: p.value for p in parse_properties(text)}


def test_properties_comments_separators_and_blanks() -> None:
    text = "# a comment\n  ! another\n\na=1\nb : 2\nc 3\n  d=  spaced value  \ne\nf=x=y\n"
    assert _pairs(text) == {"a": "1", "b": "2", "c": "3", "d": "spaced value  ", "e": "", "f": "x=y"}


def test_properties_continuation_lines_drop_leading_blanks() -> None:
    text = "rule=\\\n    op=='X' \\\n    && ref=='y'\nnext=1\n"
    props = parse_properties(text)
    assert [(p.key, p.value, p.line) for p in props] == [("rule", "op=='X' && ref=='y'", 1), ("next", "1", 4)]


def test_properties_an_even_number_of_backslashes_does_not_continue() -> None:
    assert _pairs("a=x\\\\\nb=2\n") == {"a": "x\\", "b": "2"}


def test_properties_escapes_and_the_last_value_wins() -> None:
    text = "k\\ ey\\:x=t\\tn\\u00e9\\q\r\nk\\ ey\\:x=again\r\n"
    assert _pairs(text) == {"k ey:x": "again"}
    assert _pairs("v=t\\tn\\u00e9\\q\n") == {"v": "t\tn\u00e9q"}


def test_properties_a_malformed_unicode_escape_names_its_line() -> None:
    with pytest.raises(PropertiesError, match=r"rules.properties:2: malformed \\uXXXX escape '\\u12g4'"):
        parse_properties("a=1\nb=\\u12g4\n", "rules.properties")


def test_rules_ignore_other_settings_and_add_nessie_implicit_view_rule() -> None:
    text = (
        "quarkus.http.port=19120\nnessie.server.authorization.enabled=true\n"
        "nessie.server.authorization.type=CEL\nnessie.server.authorization.rules.r=op=='LIST_COMMIT_LOG'\n"
    )
    authorization = rules_from_properties(text, "app.properties")
    assert [r.name for r in authorization.rules] == ["r", "__ALLOW_VIEWING_REF_ID"]
    checker = authorization.checker(None)
    assert checker.allows(Check(Op.VIEW_REFERENCE, "anything"))
    assert not checker.allows(Check(Op.READ_ENTRIES, "main"))


def test_rules_see_the_principal_name_as_role_and_its_roles() -> None:
    text = "nessie.server.authorization.rules.r=op=='READ_ENTRIES' && role=='alice' && 'ops' in roles\n"
    authorization = rules_from_properties(text, "f")
    check = Check(Op.READ_ENTRIES, "main")
    assert authorization.checker(Principal("alice", frozenset({"ops"}))).allows(check)
    assert not authorization.checker(Principal("alice")).allows(check)
    assert not authorization.checker(None).allows(check)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "nessie.server.authorization.rules.bob=\\\n  path=='BobsBar` && role=='Bob')\n",
            "rules.properties:1: authorization rule 'bob' does not compile: ",
        ),
        (
            "# x\nnessie.server.authorization.rules.api=api.apiName == 'Nessie'\n",
            "rules.properties:2: authorization rule 'api' uses 'api', which Nessie's rules do not have",
        ),
        (
            "nessie.server.authorization.rules.empty=\n",
            "rules.properties:1: authorization rule 'empty' has no expression",
        ),
        ("quarkus.http.port=1\n", "rules.properties: no authorization rules"),
        (
            "nessie.server.authorization.enabled=false\nnessie.server.authorization.rules.r=true\n",
            "rules.properties:1: nessie.server.authorization.enabled=false turns authorization off",
        ),
        ("nessie.server.authorization.rules.r=x\\u00zz\n", "rules.properties:1: malformed \\uXXXX escape"),
    ],
    ids=["syntax", "undeclared-variable", "empty", "no-rules", "disabled", "bad-escape"],
)
def test_bad_rules_are_refused_with_where_and_why(text: str, message: str) -> None:
    with pytest.raises(RulesError) as refused:
        rules_from_properties(text, "rules.properties")
    assert message in str(refused.value)


def test_a_rule_that_does_not_give_a_boolean_is_a_server_error_naming_it() -> None:
    from rest_server.errors import ApiError

    authorization = rules_from_properties("nessie.server.authorization.rules.odd=ref\n", "f.properties")
    with pytest.raises(ApiError) as failed:
        authorization.checker(None).allows(Check(Op.READ_ENTRIES, "main"))
    assert failed.value.status == 500
    assert "Authorization rule 'odd' (f.properties:1) gave 'main', not true or false" in str(failed.value)


def test_serve_refuses_a_bad_rules_file_before_starting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "rules.properties"
    rules.write_text("nessie.server.authorization.rules.broken=op ==\n", encoding="utf-8")
    assert main(["serve", "--backend", "inmemory", "--authorization-rules", str(rules)]) == 2
    err = capsys.readouterr().err
    assert f"lochkit serve: {rules}:1: authorization rule 'broken' does not compile" in err
    missing = tmp_path / "missing.properties"
    assert main(["serve", "--backend", "inmemory", "--authorization-rules", str(missing)]) == 2
    assert f"cannot read authorization rules from {missing}" in capsys.readouterr().err


def test_load_rules_reads_a_file(tmp_path: Path) -> None:
    rules = tmp_path / "r.properties"
    rules.write_text("nessie.server.authorization.rules.all=op=='VIEW_REFERENCE'\n", encoding="utf-8")
    assert [r.origin for r in load_rules(rules).rules] == [f"{rules}:1"]


def test_the_example_in_the_docs_loads_and_means_what_it_says() -> None:
    page = (Path(__file__).parents[2] / "docs" / "serve.md").read_text(encoding="utf-8")
    example = page.split("```properties\n", 1)[1].split("```", 1)[0]
    checker = rules_from_properties(example, "serve.md").checker(Principal("bob", frozenset({"engineers"})))
    assert checker.allows(Check(Op.VIEW_REFERENCE, "dev-x"))
    assert not checker.allows(Check(Op.VIEW_REFERENCE, "prod"))
    sales = ContentKey.of("sales", "orders")
    assert checker.allows(Check(Op.CREATE_ENTITY, "dev-x", sales, "ICEBERG_TABLE"))
    assert not checker.allows(Check(Op.CREATE_ENTITY, "dev-x", sales, "ICEBERG_VIEW"))
    assert (
        not rules_from_properties(example, "serve.md")
        .checker(None)
        .allows(Check(Op.DELETE_REFERENCE, "dev-x"))
    )
