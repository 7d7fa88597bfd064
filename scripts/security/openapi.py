"""The operations of openapi.yaml, read with a few regular expressions (no PyYAML): enough for the
file's own layout, paths at two spaces, methods at four, an operation's `security: []` at six."""
import re

METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def _parse(path):
    """[[method, path, needs_auth, operator_only]] in file order."""
    found = []
    in_paths = False
    current_path = None
    with open(path) as file:
        for line in file:
            if re.match(r"^\S", line):
                in_paths = line.startswith("paths:")
                continue
            if not in_paths:
                continue
            match = re.match(r"^  (/\S*):\s*$", line)
            if match:
                current_path = match.group(1)
                continue
            match = re.match(r"^    (\w+):\s*$", line)
            if match and current_path and match.group(1) in METHODS:
                found.append([match.group(1).upper(), current_path, True, False])
                continue
            if not found or found[-1][1] != current_path:
                continue
            if re.match(r"^      security:\s*\[\s*\]\s*$", line):
                found[-1][2] = False
            elif re.match(r"^      security:\s*\[\s*\{\s*operatorToken:", line):
                found[-1][3] = True
    return found


def operations(path):
    """[(method, path, needs_auth)] in file order."""
    return [tuple(op[:3]) for op in _parse(path)]


def operator_operations(path):
    """{(method, path)} of the operations secured by the operator's token."""
    return {(op[0], op[1]) for op in _parse(path) if op[3]}
