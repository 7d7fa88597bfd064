"""The operations of openapi.yaml, read with a few regular expressions (no PyYAML): enough for the
file's own layout, paths at two spaces, methods at four, an operation's `security: []` at six."""
import re

METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def operations(path):
    """[(method, path, needs_auth)] in file order."""
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
                found.append([match.group(1).upper(), current_path, True])
                continue
            if re.match(r"^      security:\s*\[\s*\]\s*$", line) and found and found[-1][1] == current_path:
                found[-1][2] = False
    return [tuple(op) for op in found]


def operator_operations(path):
    """{(method, path)} of the operations secured by the operator's token alone."""
    found = set()
    in_paths = False
    current_path = None
    method = None
    with open(path) as file:
        for line in file:
            if re.match(r"^\S", line):
                in_paths = line.startswith("paths:")
                continue
            if not in_paths:
                continue
            match = re.match(r"^  (/\S*):\s*$", line)
            if match:
                current_path, method = match.group(1), None
                continue
            match = re.match(r"^    (\w+):\s*$", line)
            if match and match.group(1) in METHODS:
                method = match.group(1).upper()
                continue
            if method and re.match(r"^      security:\s*\[\s*\{\s*operatorToken:", line):
                found.add((method, current_path))
    return found
