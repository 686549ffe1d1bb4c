#!/usr/bin/env python3
"""An independent validator for docs/schemas/: Python's `jsonschema` (the implementation most
Python harnesses would use), as a cross-check of the Rust `jsonschema` crate.

Usage: schemas_reference.py SCHEMA_DIR < cases.json

cases.json is a list of {"schema": name, "what": text, "instance": value, "valid": bool}.
Every schema in SCHEMA_DIR is checked against the draft 2020-12 meta-schema; every case must
validate (valid: true) or fail (valid: false). Relative references ("row.schema.json") resolve
to the files of SCHEMA_DIR, never the network. Exit 0 when all agree, 1 when one does not (each
printed), 3 when the jsonschema module is missing.
"""
import json
import os
import sys

try:
    import jsonschema
    from jsonschema import Draft202012Validator
except ImportError as e:  # pragma: no cover
    print(f"python jsonschema is not installed: {e}", file=sys.stderr)
    sys.exit(3)


def load(directory):
    schemas = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".schema.json"):
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                schemas[name] = json.load(f)
    return schemas


def validator_factory(schemas):
    try:
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        registry = Registry().with_resources(
            (name, Resource.from_contents(s, default_specification=DRAFT202012))
            for name, s in schemas.items()
        )
        return lambda s: Draft202012Validator(s, registry=registry)
    except ImportError:  # jsonschema before 4.18 (Debian 12 ships 4.10)
        return lambda s: Draft202012Validator(
            s, resolver=jsonschema.RefResolver(base_uri="", referrer=s, store=dict(schemas))
        )


def main():
    directory = sys.argv[1]
    schemas = load(directory)
    make = validator_factory(schemas)
    failures = []
    for name, schema in schemas.items():
        try:
            Draft202012Validator.check_schema(schema)
        except jsonschema.exceptions.SchemaError as e:
            failures.append(f"{name}: not a valid draft 2020-12 schema: {e.message}")
    cases = json.load(sys.stdin)
    for case in cases:
        name = case["schema"] + ".schema.json"
        errors = list(make(schemas[name]).iter_errors(case["instance"]))
        if case["valid"] and errors:
            failures.append(
                f"{case['what']}: should validate against {name}: "
                + "; ".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:3])
            )
        elif not case["valid"] and not errors:
            failures.append(f"{case['what']}: should fail {name} but validates")
    for f in failures:
        print(f)
    try:
        from importlib.metadata import version

        v = version("jsonschema")
    except Exception:  # pragma: no cover
        v = "?"
    print(f"{len(cases)} cases, {len(schemas)} schemas, python jsonschema {v}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
