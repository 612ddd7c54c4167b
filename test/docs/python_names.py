"""Checks Python names that the documentation site states against an installed h2o-engine-manager.

Reads a JSON list of claims on standard input (test/docs/python-names.test.ts extracts them from
the pages) and prints a JSON list of problems, one per claim that is not true of the package the
running interpreter imports:

- {"kind": "name", "target": "h2o_engine_manager.x.Y.z"}: the module, class, function, method,
  enum member or attribute exists (instance attributes: assigned as `self.z` in the class).
- {"kind": "signature", "target": ..., "text": "..."}: a callable whose signature, rendered as
  the site shows it (see `render`), equals `text` up to white space and trailing commas.
- {"kind": "enum", "target": ..., "members": [...]}: an Enum with exactly these members, in order.
- {"kind": "parameter", "target": ..., "name": "..."}: the callable has this parameter.

`python python_names.py --render <dotted name>` prints a name's signature block as the pages
write it, for authors.
"""
import ast
import enum
import importlib
import inspect
import json
import re
import sys
import textwrap

# `h2o_engine_manager.clients.x.Y` -> `Y`, `typing.Optional` -> `Optional`, `datetime.datetime` -> `datetime`.
MODULE_PREFIX = re.compile(r"\b(?:[a-z_][a-z0-9_]*\.)+(?=[A-Za-z_])")
# `<DAIEngineState.STATE_UNSPECIFIED: 'STATE_UNSPECIFIED'>` -> `DAIEngineState.STATE_UNSPECIFIED`.
ENUM_REPR = re.compile(r"<(\w+\.\w+): [^>]*>")


def resolve(target):
    """The object a dotted name refers to, importing the longest module prefix; raises LookupError."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        owner = None
        for index, part in enumerate(parts[cut:], start=cut):
            if hasattr(obj, part):
                owner, obj = obj, getattr(obj, part)
            elif inspect.isclass(obj) and index == len(parts) - 1 and part in instance_attributes(obj):
                return InstanceAttribute(obj, part)
            else:
                raise LookupError(f"{'.'.join(parts[:index])} has no {part!r}")
        del owner
        return obj
    raise LookupError(f"no module {parts[0]!r}")


class InstanceAttribute:
    def __init__(self, cls, name):
        self.cls = cls
        self.name = name


def instance_attributes(cls):
    """Names assigned as `self.<name>` in the methods of `cls` and its bases, and annotated class fields."""
    names = set()
    for klass in inspect.getmro(cls):
        if klass is object:
            continue
        names.update(getattr(klass, "__annotations__", {}))
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        for node in ast.walk(ast.parse(source)):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                names.add(node.attr)
    return names


def shown(text):
    return MODULE_PREFIX.sub("", ENUM_REPR.sub(r"\1", text))


def parameters(obj):
    """The documented parameters of a callable: without `self` of methods looked up on a class."""
    params = list(inspect.signature(obj).parameters.values())
    if params and params[0].name in ("self", "cls") and not inspect.isclass(obj):
        params = params[1:]
    return params


def render(target):
    """The signature block the pages show for `target`, relative name first."""
    obj = resolve(target)
    label = qualified_label(target)
    if inspect.isclass(obj) and issubclass(obj, enum.Enum):
        return "enum " + label + ":\n" + "".join(f"    {m.name}\n" for m in obj).rstrip("\n")
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError) as error:
        raise LookupError(f"{target} has no signature to show ({error})") from error
    params = [shown(str(p)) for p in parameters(obj)]
    returns = ""
    if not inspect.isclass(obj) and signature.return_annotation is not inspect.Signature.empty:
        returns = " -> " + shown(inspect.formatannotation(signature.return_annotation))
    if not params:
        return f"{label}(){returns}"
    return f"{label}(\n" + "".join(f"    {p},\n" for p in params) + f"){returns}"


def qualified_label(target):
    """`pkg.module.Class.method` -> `Class.method`; `pkg.module.function` -> `function`."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            importlib.import_module(".".join(parts[:cut]))
            return ".".join(parts[cut:])
        except ImportError:
            continue
    return target


def squash(text):
    return re.sub(r",\)", ")", re.sub(r"\s+", "", text))


def check(claim):
    kind, target = claim["kind"], claim["target"]
    try:
        obj = resolve(target)
    except LookupError as error:
        return f"{target} does not exist: {error}"
    if kind == "name":
        return None
    if kind == "enum":
        if not (inspect.isclass(obj) and issubclass(obj, enum.Enum)):
            return f"{target} is not an enum"
        members = [m.name for m in obj]
        return None if members == claim["members"] else f"{target} has members {members}"
    if kind == "signature":
        try:
            actual = render(target)
        except LookupError as error:
            return str(error)
        if squash(actual) == squash(claim["text"]):
            return None
        return f"the signature of {target} is\n{actual}"
    if kind == "parameter":
        names = [p.name for p in parameters(obj)]
        return None if claim["name"] in names else f"{target} has no parameter {claim['name']!r}"
    return f"unknown claim kind {kind!r}"


def main():
    if sys.argv[1:2] == ["--render"]:
        for target in sys.argv[2:]:
            print(render(target))
        return
    claims = json.load(sys.stdin)
    problems = []
    for claim in claims:
        problem = check(claim)
        if problem is not None:
            problems.append({**claim, "problem": problem})
    json.dump(problems, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
