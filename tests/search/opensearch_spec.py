"""OpenSearch's own OpenAPI description as a request checker: method, path, query parameters and body of a request
(and the shape of a response) against the operation OpenSearch declares for them.

The specification (tests/schemas/opensearch-api, see tests/schemas/SOURCES.md) is loaded once per process and
adjusted in two ways, both documented in docs/operators/opensearch.md#checks:

- `oneOf` is read as `anyOf`: its alternatives overlap (a `term` value may be a string or an object holding one;
  a string matches several `FieldValue` alternatives), so "exactly one" would reject valid requests;
- open containers are closed: an object schema that lists its properties but says nothing about others accepts
  anything in JSON Schema, so a misspelled query, aggregation or clause key would pass. Every such schema gets
  `additionalProperties: false`, or `unevaluatedProperties: false` where it is composed (`allOf`, or properties
  beside `anyOf` alternatives), so that the keys of every part count. The parts themselves stay open (closing an
  `allOf` member would reject its siblings' keys), and the `unevaluatedProperties: true` some alternatives carry
  (which would reopen the whole) is dropped from them.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator
from copy import deepcopy
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urljoin, urlsplit

import jsonschema
import orjson
import referencing
import yaml
from referencing.jsonschema import DRAFT202012

SCHEMAS = Path(os.environ.get("SCHEMAS_DIR", Path(__file__).resolve().parent.parent / "schemas"))
SPEC = SCHEMAS / "opensearch-api" / "spec"
COMPOSED = ("allOf", "anyOf", "oneOf")
OPENERS = ("additionalProperties", "patternProperties", "unevaluatedProperties")
METHODS = ("get", "put", "post", "delete", "head")
# The operations' files: the core API (search, bulk, ping) and the index API (templates, indices, aliases). The
# other namespaces (plugins, cluster, snapshots ...) hold nothing this service calls; not loading them halves the
# start-up of the checker.
NAMESPACES = ("_core", "indices")

# Validity of (subschema, instance) pairs already decided during one check: `unevaluatedProperties` asks again
# for every alternative of every enclosing composed schema, which made nested aggregations cost seconds.
_decided: dict[tuple[int, int], bool] = {}
_checking = threading.RLock()


_looked_up: dict[tuple[str, str], Any] = {}


def _lookup(validator: Any, ref: str) -> Any:
    """`validator`'s resolution of `ref`, kept (the specification has no `$id` nor `$dynamicRef`: a reference
    means the same from the same document whatever the path that led there)."""
    key = (validator._resolver._base_uri, ref)
    if key not in _looked_up:
        _looked_up[key] = validator._resolver.lookup(ref)
    return _looked_up[key]


def _valid(validator: Any, instance: Any, schema: Any) -> bool:
    key = (id(schema), id(instance))
    if key not in _decided:
        _decided[key] = validator.evolve(schema=schema).is_valid(instance)
    return _decided[key]


def _evaluated(validator: Any, instance: dict[str, Any], schema: Any) -> set[str]:
    """The keys of `instance` that `schema` evaluates (jsonschema's own walk, with the decisions remembered)."""
    if not isinstance(schema, dict):
        return set()
    keys: set[str] = set()
    if "$ref" in schema:
        resolved = _lookup(validator, schema["$ref"])
        keys |= _evaluated(validator.evolve(schema=resolved.contents, _resolver=resolved.resolver), instance,
                           resolved.contents)
    keys |= (schema.get("properties") or {}).keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if keyword in schema:
            keys |= {k for k, v in instance.items() if _valid(validator, v, schema[keyword])}
    for pattern in schema.get("patternProperties") or {}:
        keys |= {k for k in instance if re.search(pattern, k)}
    for keyword in COMPOSED:
        for sub in schema.get(keyword) or []:
            if _valid(validator, instance, sub):
                keys |= _evaluated(validator, instance, sub)
    return keys


def _unevaluated_properties(validator: Any, unevaluated: Any, instance: Any, schema: dict[str, Any]) -> Any:
    if not isinstance(instance, dict):
        return
    evaluated = _evaluated(validator, instance, schema)
    extra = sorted(k for k in instance if k not in evaluated and not _valid(validator, instance[k], unevaluated))
    if extra:
        yield jsonschema.ValidationError(f"Unevaluated properties are not allowed ({', '.join(map(repr, extra))} "
                                         f"{'was' if len(extra) == 1 else 'were'} unexpected)")


def _plausible(validator: Any, instance: Any, schema: Any, depth: int = 0) -> bool:
    """False when an alternative plainly does not apply (a required key missing, another type): its errors would
    only hide the one that explains the problem (and gathering them all costs seconds in nested aggregations)."""
    if not isinstance(schema, dict) or depth > 10:
        return True
    if "$ref" in schema:
        resolved = _lookup(validator, schema["$ref"])
        inner = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
        if not _plausible(inner, instance, resolved.contents, depth + 1):
            return False
    if "type" in schema and not any(validator.is_type(instance, t) for t in _listed(schema["type"])):
        return False
    if isinstance(instance, dict) and any(k not in instance for k in schema.get("required") or []):
        return False
    return all(_plausible(validator, instance, sub, depth + 1) for sub in schema.get("allOf") or [])


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _any_of(validator: Any, alternatives: list[Any], instance: Any, schema: dict[str, Any]) -> Any:
    """`anyOf` (and `oneOf`, see the module docstring), deciding each alternative once per check; the errors of
    the alternatives are gathered only when none fits, to say why."""
    if any(_valid(validator, instance, sub) for sub in alternatives):
        return
    context = [error for i, sub in enumerate(alternatives) if _plausible(validator, instance, sub)
               for error in validator.descend(instance, sub, schema_path=i)]
    yield jsonschema.ValidationError(f"{instance!r:.200} is not valid under any of the given schemas", context=context)


def _all_of(validator: Any, members: list[Any], instance: Any, schema: dict[str, Any]) -> Any:
    """`allOf`, deciding each member once per check (an enclosing `unevaluatedProperties` decides them again)."""
    for i, sub in enumerate(members):
        if not _valid(validator, instance, sub):
            yield from validator.descend(instance, sub, schema_path=i)


def _ref(validator: Any, ref: str, instance: Any, schema: dict[str, Any]) -> Any:
    """`$ref`, deciding the schema it names once per check."""
    resolved = _lookup(validator, ref)
    inner = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
    if not _valid(inner, instance, resolved.contents):
        yield from inner.descend(instance, resolved.contents)


# Draft 2020-12 as the specification declares, with the keywords above: the same results, each decided once per
# check (no `if`/`dependentSchemas` in the parts the checked operations use, which the remembered walk leaves out).
Checker = jsonschema.validators.extend(jsonschema.Draft202012Validator, {
    "allOf": _all_of, "anyOf": _any_of, "oneOf": _any_of, "$ref": _ref,
    "unevaluatedProperties": _unevaluated_properties})


def _subschemas(schema: dict[str, Any], pointer: str) -> Iterator[tuple[str, Any]]:
    """(pointer, subschema) of every schema keyword holding schemas."""
    for key in ("additionalProperties", "unevaluatedProperties", "items", "contains", "propertyNames", "not",
                "if", "then", "else"):
        if isinstance(schema.get(key), dict):
            yield f"{pointer}/{key}", schema[key]
    for key in ("properties", "patternProperties", "dependentSchemas", "$defs"):
        for name, sub in (schema.get(key) or {}).items():
            yield f"{pointer}/{key}/{_escape(name)}", sub
    for key in (*COMPOSED, "prefixItems"):
        for i, sub in enumerate(schema.get(key) or []):
            yield f"{pointer}/{key}/{i}", sub


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _unescape(segment: str) -> str:
    return unquote(segment).replace("~1", "/").replace("~0", "~")


def _roots(doc: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """Where schemas start in an OpenAPI document: components, and inside parameters, bodies and responses."""
    components = doc.get("components") or {}
    for name, schema in (components.get("schemas") or {}).items():
        yield f"/components/schemas/{_escape(name)}", schema
    for name, param in (components.get("parameters") or {}).items():
        if isinstance(param.get("schema"), dict):
            yield f"/components/parameters/{_escape(name)}/schema", param["schema"]
    for kind in ("requestBodies", "responses"):
        for name, item in (components.get(kind) or {}).items():
            for media, content in (item.get("content") or {}).items():
                if isinstance(content.get("schema"), dict):
                    yield f"/components/{kind}/{_escape(name)}/content/{_escape(media)}/schema", content["schema"]


@dataclass
class Operation:
    """One operation of the specification: where it lives and what it declares."""

    method: str
    template: str
    uri: str  # the namespace file
    pointer: str  # to the operation object
    spec: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.spec.get("operationId", f"{self.method} {self.template}"))


@dataclass
class Check:
    """The outcome of checking one request: the operation it matched and every problem found."""

    method: str
    target: str
    body: bytes = b""
    operation: Operation | None = None
    problems: list[str] = field(default_factory=list)


class Spec:
    """The loaded, adjusted specification with its operations and compiled validators."""

    def __init__(self, root: Path = SPEC) -> None:
        """Load the specification under `root` and adjust it (see the module docstring)."""
        self.root = root
        self.docs: dict[str, Any] = {}
        for path in sorted([*root.glob("*.yaml"), *root.glob("schemas/*.yaml"),
                            *(root / "namespaces" / f"{name}.yaml" for name in NAMESPACES)]):
            with path.open(encoding="utf-8") as handle:
                self.docs[path.as_uri()] = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        self.closed = self._close_containers()
        self.registry: referencing.Registry[Any] = referencing.Registry().with_resources(
            (uri, DRAFT202012.create_resource(doc)) for uri, doc in self.docs.items())
        self.operations = list(self._operations())
        self._validators: dict[str, Any] = {}
        self.used: set[str] = set()  # operation ids that a checked request matched

    # --- loading --------------------------------------------------------------------------------------
    def node(self, uri: str, pointer: str) -> Any:
        """The object at `pointer` in the document `uri`."""
        found = self.docs[uri]
        for segment in filter(None, pointer.split("/")):
            found = found[int(segment)] if isinstance(found, list) else found[_unescape(segment)]
        return found

    def follow(self, uri: str, pointer: str) -> tuple[str, str, Any]:
        """Follow `$ref`s (OpenAPI objects or schemas) from (uri, pointer) to what they name."""
        found = self.node(uri, pointer)
        while isinstance(found, dict) and "$ref" in found and len(found.keys() - {"description", "summary"}) == 1:
            target = urljoin(uri, found["$ref"])
            uri, _, pointer = target.partition("#")
            found = self.node(uri, pointer)
        return uri, pointer, found

    def _schemas(self) -> dict[int, tuple[str, str, dict[str, Any]]]:
        """Every schema object of every document, by identity."""
        found: dict[int, tuple[str, str, dict[str, Any]]] = {}
        stack = [(uri, pointer, schema) for uri, doc in self.docs.items() for pointer, schema in _roots(doc)]
        for uri, doc in self.docs.items():  # schemas written inline in operations
            for template, item in (doc.get("paths") or {}).items():
                for method, op in item.items():
                    if method not in METHODS:
                        continue
                    base = f"/paths/{_escape(template)}/{method}"
                    for i, param in enumerate(op.get("parameters") or []):
                        if isinstance(param.get("schema"), dict):
                            stack.append((uri, f"{base}/parameters/{i}/schema", param["schema"]))
                    for media, content in ((op.get("requestBody") or {}).get("content") or {}).items():
                        stack.append((uri, f"{base}/requestBody/content/{_escape(media)}/schema", content["schema"]))
        while stack:
            uri, pointer, schema = stack.pop()
            if not isinstance(schema, dict) or id(schema) in found:
                continue
            found[id(schema)] = (uri, pointer, schema)
            stack.extend((uri, p, s) for p, s in _subschemas(schema, pointer))
        return found

    def _close_containers(self) -> int:
        """Close every object schema that lists its properties, except where it is a part of a composed schema;
        returns how many were closed.

        A part named by `$ref` (`allOf: [{$ref: QueryBase}, ...]`) is pointed at an open copy of its target, kept
        under `components/x-open` of the target's document, so the target stays closed wherever it is used alone
        (`QueryContainer` is both a part of `FilterAggregationFields` and the container of every query).
        """
        schemas = self._schemas()
        pending = list(schemas.values())
        parts: set[int] = set()
        twins: dict[str, str] = {}  # target uri#pointer -> its open copy's uri#pointer

        def collect(uri: str, pointer: str, schema: Any) -> None:
            stack = [(pointer, schema)]
            while stack:
                at, item = stack.pop()
                if isinstance(item, dict) and id(item) not in schemas:
                    schemas[id(item)] = (uri, at, item)
                    pending.append((uri, at, item))
                    stack.extend(_subschemas(item, at))

        def twin(uri: str, ref: str) -> str:
            target = urljoin(uri, ref)
            if target not in twins:
                target_uri, _, pointer = target.partition("#")
                copy = deepcopy(self.node(target_uri, pointer))
                store = self.docs[target_uri].setdefault("components", {}).setdefault("x-open", {})
                name = _escape(pointer.strip("/").replace("/", "."))
                store[name] = copy
                twins[target] = f"{target_uri}#/components/x-open/{_escape(name)}"
                collect(target_uri, f"/components/x-open/{_escape(name)}", copy)
                part(copy, target_uri)
            return twins[target]

        def part(schema: Any, uri: str) -> None:
            """`schema` (and what it refers to or is made of) contributes keys to an enclosing schema."""
            if not isinstance(schema, dict) or id(schema) in parts:
                return
            parts.add(id(schema))
            if "$ref" in schema:
                schema["$ref"] = twin(uri, schema["$ref"])
            for key in COMPOSED:
                for sub in schema.get(key) or []:
                    part(sub, uri)

        def overlay(schema: Any, uri: str) -> None:
            """A property schema that several members of one `allOf` give: all of them apply to one value."""
            part(schema, uri)
            if isinstance(schema, dict) and isinstance(schema.get("items"), dict):
                overlay(schema["items"], uri)

        while pending:
            uri, _pointer, schema = pending.pop()
            members = []
            for sub in schema.get("allOf") or []:
                part(sub, uri)
                where = uri
                while isinstance(sub, dict) and "$ref" in sub:
                    where, _, ref_pointer = urljoin(where, sub["$ref"]).partition("#")
                    sub = self.node(where, ref_pointer)
                members.append((where, sub.get("properties") or {} if isinstance(sub, dict) else {}))
            for name in {n for _, props in members for n in props}:
                given = [(u, props[name]) for u, props in members if name in props]
                if len(given) > 1:
                    for u, sub in given:
                        overlay(sub, u)
            if "properties" in schema:  # alternatives beside listed properties add their keys to them
                for key in ("anyOf", "oneOf"):
                    for sub in schema.get(key) or []:
                        part(sub, uri)
                if "$ref" in schema:
                    schema["$ref"] = twin(uri, schema["$ref"])
        closed = 0
        for ident, (_uri, _pointer, schema) in schemas.items():
            if ident in parts:
                if schema.get("unevaluatedProperties") is True:
                    del schema["unevaluatedProperties"]
                continue
            if any(k in schema for k in OPENERS) or not ("properties" in schema or "allOf" in schema):
                continue
            if any(k in schema for k in (*COMPOSED, "$ref")):
                schema["unevaluatedProperties"] = False
            else:
                schema["additionalProperties"] = False
            closed += 1
        return closed

    def _operations(self) -> Iterator[Operation]:
        for uri, doc in self.docs.items():
            for template, item in (doc.get("paths") or {}).items():
                for method in METHODS:
                    if method in item:
                        yield Operation(method.upper(), template, uri, f"/paths/{_escape(template)}/{method}",
                                        item[method])

    def validator(self, uri: str, pointer: str) -> Any:
        """The compiled validator of the schema at (uri, pointer), built once."""
        key = f"{uri}#{pointer}"
        if key not in self._validators:
            self._validators[key] = Checker({"$ref": key}, registry=self.registry)
        return self._validators[key]

    def errors(self, uri: str, pointer: str, instance: Any) -> list[str]:
        """Messages of everything wrong with `instance` under the schema at (uri, pointer), most specific first."""
        found = []
        with _checking:  # the remembered decisions belong to one check at a time
            _decided.clear()
            for error in self.validator(uri, pointer).iter_errors(instance):
                best = jsonschema.exceptions.best_match([error])
                where = "/".join(str(p) for p in best.absolute_path) or "(root)"
                found.append(f"{where}: {best.message[:300]}")
            _decided.clear()
        return found

    # --- requests -------------------------------------------------------------------------------------
    def match(self, method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
        """The operation of `method path`: the template with the most literal segments that fits."""
        segments = [unquote(s) for s in path.strip("/").split("/")] if path.strip("/") else []
        best: tuple[int, Operation, dict[str, str]] | None = None
        for op in self.operations:
            if op.method != method:
                continue
            parts = [s for s in op.template.strip("/").split("/") if s]
            if len(parts) != len(segments):
                continue
            values: dict[str, str] = {}
            for part, segment in zip(parts, segments, strict=True):
                if part.startswith("{") and part.endswith("}"):
                    if not segment or segment.startswith("_"):
                        break
                    values[part[1:-1]] = segment
                elif part != segment:
                    break
            else:
                literal = len(parts) - len(values)
                if best is None or literal > best[0]:
                    best = (literal, op, values)
        return (best[1], best[2]) if best else None

    def parameters(self, op: Operation) -> dict[tuple[str, str], tuple[str, str, dict[str, Any]]]:
        """(in, name) -> (uri, pointer, parameter object) of the operation's and the global parameters."""
        found = {}
        for i, _ in enumerate(op.spec.get("parameters") or []):
            uri, pointer, param = self.follow(op.uri, f"{op.pointer}/parameters/{i}")
            found[(param["in"], param["name"])] = (uri, pointer, param)
        glob = (SPEC / "_global_parameters.yaml").as_uri()
        for name, param in self.docs[glob]["components"]["parameters"].items():
            found.setdefault((param["in"], param["name"]), (glob, f"/components/parameters/{_escape(name)}", param))
        return found

    def check_value(self, where: str, uri: str, pointer: str, raw: str) -> list[str]:
        """A path or query string value against its parameter schema: the string as it is, or read as a boolean,
        a number or a comma-separated list when the schema wants one."""
        candidates: list[Any] = [raw]
        if raw in ("true", "false"):
            candidates.append(raw == "true")
        if re.fullmatch(r"-?\d+", raw):
            candidates.append(int(raw))
        if "," in raw:
            candidates.append(raw.split(","))
        candidates.append([raw])
        problems = self.errors(uri, f"{pointer}/schema", candidates[0])
        if problems and any(not self.errors(uri, f"{pointer}/schema", c) for c in candidates[1:]):
            return []
        return [f"{where}: {p}" for p in problems]

    def check(self, method: str, target: str, body: bytes | None, content_type: str = "",
              documents: Callable[[str], Any] | None = None) -> Check:
        """Everything wrong with one request as OpenSearch's specification describes the operation; a `_bulk`
        body's source lines are also checked against `documents(index)` (see `check_bulk`) when it is given."""
        result = Check(method, target, body or b"")
        parts = urlsplit(target)
        matched = self.match(method, parts.path)
        if matched is None:
            result.problems.append(f"no operation {method} {parts.path} in the specification")
            return result
        op, path_values = matched
        result.operation = op
        self.used.add(op.id)
        params = self.parameters(op)
        for name, value in path_values.items():
            uri, pointer, _ = params[("path", name)]
            result.problems += self.check_value(f"path {name}", uri, pointer, value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True):
            if ("query", name) not in params:
                result.problems.append(f"query parameter {name!r} is not a parameter of {op.id}")
                continue
            uri, pointer, param = params[("query", name)]
            result.problems += self.check_value(f"query {name}", uri, pointer, value)
            if param.get("deprecated"):
                result.problems.append(f"query parameter {name!r} of {op.id} is deprecated")
        result.problems += self.check_body(op, body or b"", content_type)
        if op.spec.get("x-operation-group") == "bulk" and not result.problems:
            result.problems += self.check_bulk(body or b"", documents)
        if op.spec.get("deprecated"):
            result.problems.append(f"{op.id} is deprecated")
        return result

    def check_body(self, op: Operation, body: bytes, content_type: str) -> list[str]:
        if "requestBody" not in op.spec:
            return ["the operation takes no body"] if body.strip() else []
        uri, pointer, request_body = self.follow(op.uri, f"{op.pointer}/requestBody")
        if not body.strip():
            return ["the body is required"] if request_body.get("required") else []
        media, = request_body["content"]
        if media == "application/x-ndjson":
            try:
                instance: Any = [orjson.loads(line) for line in body.splitlines() if line.strip()]
            except orjson.JSONDecodeError as exc:
                return [f"a body line is not JSON: {exc}"]
            if not body.endswith(b"\n"):
                return ["an NDJSON body must end with a newline"]
        else:
            try:
                instance = orjson.loads(body)
            except orjson.JSONDecodeError as exc:
                return [f"the body is not JSON: {exc}"]
        if content_type.split(";")[0].strip() not in ("application/json", media):
            return [f"Content-Type {content_type!r} for a body of type {media}"]
        return [f"body {p}" for p in self.errors(uri, f"{pointer}/content/{_escape(media)}/schema", instance)]

    def check_bulk(self, body: bytes, documents: Callable[[str], Any] | None = None) -> list[str]:
        """Every action line of a `_bulk` body against the bulk action schema, and every source line against the
        document validator `documents(index)` of the index its action names (None: no such index)."""
        problems: list[str] = []
        lines = [orjson.loads(line) for line in body.splitlines() if line.strip()]
        i = 0
        while i < len(lines):
            action = lines[i]
            problems += [f"bulk line {i + 1}: {p}" for p in self.check_schema(
                "schemas/_core.bulk.yaml", "/components/schemas/OperationContainer", action)]
            (kind, meta), = action.items() if isinstance(action, dict) and len(action) == 1 else (("?", {}),)
            i += 1
            if kind in ("index", "create", "update"):
                if i >= len(lines):
                    problems.append(f"bulk line {i}: {kind} without its source line")
                    break
                validator = documents(str(meta.get("_index", ""))) if documents else None
                source = lines[i]["doc"] if kind == "update" else lines[i]
                if documents and validator is None:
                    problems.append(f"bulk line {i}: no index {meta.get('_index')!r} to write to")
                elif validator is not None:
                    problems += [f"bulk line {i + 1} {'/'.join(map(str, e.absolute_path)) or '(root)'}: "
                                 f"{e.message[:200]}" for e in validator.iter_errors(source)]
                i += 1
        return problems

    # --- responses ------------------------------------------------------------------------------------
    def response_schema(self, op: Operation, status: int) -> tuple[str, str] | None:
        """(uri, pointer) of the JSON schema of the operation's answer with `status`, None when it has no body."""
        responses = op.spec.get("responses") or {}
        key = str(status) if str(status) in responses else "default" if "default" in responses else None
        if key is None:
            if status >= 400:
                return None
            raise KeyError(f"{op.id} declares no {status} answer")
        uri, pointer, response = self.follow(op.uri, f"{op.pointer}/responses/{key}")
        if "schema" not in ((response.get("content") or {}).get("application/json") or {}):
            return None
        return uri, f"{pointer}/content/application~1json/schema"

    def check_response(self, op: Operation, status: int, body: Any) -> list[str]:
        """What is wrong with an answer `body` under the operation's response schema for `status`."""
        where = self.response_schema(op, status)
        if where is None:  # error bodies the specification leaves undescribed are not checked
            return [] if body is None or status >= 400 else [f"{op.id} answers {status} with no body"]
        return self.errors(*where, body)

    def check_schema(self, uri_name: str, pointer: str, instance: Any) -> list[str]:
        """`instance` against a named schema, e.g. ("schemas/_core.bulk.yaml", "/components/schemas/...")."""
        return self.errors((self.root / uri_name).as_uri(), pointer, instance)


@cache
def spec() -> Spec:
    """The specification, loaded and adjusted once per process."""
    return Spec()


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in str(text).split(".") if p.isdigit())


def api_version() -> str:
    """The OpenSearch version the specification describes (`x-api-version` of `_info.yaml`)."""
    return str(spec().docs[(SPEC / "_info.yaml").as_uri()]["x-api-version"])


# --- documents against the index mapping ----------------------------------------------------------------
# What a JSON value of each field type may be (strictly what this service should send: OpenSearch would also
# coerce numbers given as strings and the like, which a document of ours never needs).
_DATE = r"^-?\d{4}(-\d{2}(-\d{2}([T ]\d{2}(:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?)?)?$"
INTEGERS = {"long": 63, "integer": 31, "short": 15, "byte": 7}
LEAVES: dict[str, dict[str, Any]] = {
    "keyword": {"type": ["string"]}, "text": {"type": ["string"]}, "boolean": {"type": ["boolean"]},
    # strict_date_optional_time||epoch_millis, the default format of a date field
    "date": {"type": ["string", "integer"], "pattern": _DATE},
    "geo_point": {"type": ["object"], "properties": {"lat": {"type": "number", "minimum": -90, "maximum": 90},
                                                     "lon": {"type": "number", "minimum": -180, "maximum": 180}},
                  "required": ["lat", "lon"], "additionalProperties": False},
    **{name: {"type": ["integer"], "minimum": -(2**bits), "maximum": 2**bits - 1} for name, bits in INTEGERS.items()},
}


def _many(schema: dict[str, Any]) -> dict[str, Any]:
    """A field holds one value, none (null) or an array of them (the other keywords apply to their own type
    only: `pattern` to strings, `minimum` to numbers, `properties` to objects)."""
    one = {**schema, "type": [*schema["type"], "null"]}
    return {**one, "type": [*one["type"], "array"], "items": one}


def document_schema(properties: dict[str, Any], strict: bool = True) -> dict[str, Any]:
    """A JSON Schema for documents of a mapping: each field's JSON type, objects as objects (or arrays of them)
    or as dotted names (`"meeting.title": ...`, which OpenSearch expands), no unmapped field when the mapping is
    `dynamic: strict`."""
    def fields(props: dict[str, Any], prefix: str = "") -> dict[str, Any]:
        found: dict[str, Any] = {}
        for name, spec in props.items():
            path = prefix + name
            if "properties" in spec:
                found[path] = _many({**document_schema(spec["properties"], strict), "type": ["object"]})
                found.update(fields(spec["properties"], path + "."))
            elif spec.get("type", "object") == "object":
                found[path] = _many({"type": ["object"]})  # `enabled: false`: stored, never parsed
            else:
                found[path] = _many(LEAVES[spec["type"]])
        return found

    return {"type": "object", "properties": fields(properties), "additionalProperties": not strict}
