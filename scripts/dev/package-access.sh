#!/usr/bin/env bash
# Access control that says what is API (issue 33 item 3): the package's only product is the
# executable `richpush`, so no other package imports any of its library targets. What crosses
# targets is `package`, not `public`:
#   public <decl>         -> package <decl>          (also after attributes and other modifiers:
#                                                      `@inlinable public`, `nonisolated public`, ...)
#   public private(set)   -> package private(set)
#   public(set)           -> package(set)
#   public import X       -> package import X        (SE-0409; the targets build with
#                                                      InternalImportsByDefault)
# Only code is touched: comments (line, doc and nested block comments) and string literals
# (single-line and multi-line, raw or not) are left as they are, so doc text that says "public"
# stays. `open` is reported, not changed: Swift has no package-wide `open`.
#
# Exceptions the compiler forces live in scripts/dev/package-access.exceptions: a `public import`
# that must stay public (a public conformance in that file needs it), or one that becomes a plain
# `import` because, once everything is `package`, no package declaration of that file uses the
# module (a package type's conformance or a package function's default argument needs only an
# internal import; the compiler warns "package import of 'X' was not used in package declarations").
#
# Idempotent: a second run changes nothing. Prints what it changed and what it left.
# Usage: scripts/dev/package-access.sh [--check | --build]
#   --check  change nothing; exit 1 if a run would change something
#   --build  convert, then `swift build --build-tests` and let the compiler's access-level import
#            diagnostics correct the imports (recording each correction in the exceptions file),
#            until the build has none left (at most 4 builds). Use it on a newer main, where new
#            files may need new exceptions; the first build recompiles every file with an
#            access-level import so that its warnings are seen.
set -euo pipefail
cd "$(dirname "$0")/../.."

mode=${1:-}
case "$mode" in ""|--check|--build) ;; *) sed -n '2,/^set -e/p' "$0" | sed '$d'; exit 2 ;; esac

convert() {
CHECK=$([[ "$mode" == --check ]] && echo 1 || echo 0) python3 - <<'PY'
import os, re, subprocess, sys

# Exceptions to `public import X` -> `package import X`, from scripts/dev/package-access.exceptions:
# (file, module) -> why. keep-public: stays `public import`; plain-import: becomes `import`.
KEEP_PUBLIC, DEMOTE_IMPORT = {}, {}
with open("scripts/dev/package-access.exceptions", encoding="utf-8") as f:
    for raw in f:
        line, _, why = raw.partition("#")
        if not line.strip():
            continue
        action, path, module = line.split()
        {"keep-public": KEEP_PUBLIC, "plain-import": DEMOTE_IMPORT}[action][(path, module)] = why.strip()

check = os.environ.get("CHECK") == "1"
files = subprocess.run(
    ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", "Sources/*.swift", "Tests/*.swift"],
    check=True, capture_output=True, text=True,
).stdout.split()

MODS = r"(?:nonisolated|final|static|class|override|required|convenience|mutating|nonmutating|indirect|lazy|dynamic|optional|weak|unowned|distributed|consuming|borrowing)"
KEYWORDS = (r"var|let|func|init|deinit|subscript|struct|enum|class|actor|protocol|typealias|extension|"
            r"associatedtype|case|macro|precedencegroup|operator|prefix|postfix|infix|private|fileprivate|internal|"
            + MODS[3:-1])
ATTR = r"@\w+(?:\([^()]*(?:\([^()]*\)[^()]*)*\))?"
# `public` as a declaration modifier: at the start of a code segment (line start, or after `{`,
# `;` or `}`), after any attributes and other modifiers.
DECL = re.compile(
    r"(?P<pre>(?:^|(?<=[{;}]))\s*(?:" + ATTR + r"\s+)*(?:" + MODS + r"\s+)*)"
    r"(?P<kw>public|open)(?P<post>\(set\)|(?=\s+(?:@|(?:" + KEYWORDS + r")\b)))"
)
IMPORT = re.compile(r"^(?P<indent>\s*)(?P<attrs>(?:@\w+\s+)*)(?P<acc>public|package)\s+import\s+(?P<kind>(?:class|struct|enum|protocol|typealias|func|var|let)\s+)?(?P<mod>[\w.]+)")

def code_mask(text):
    """Per character: True where it is code (not a comment, not inside a string literal)."""
    mask = [True] * len(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j): mask[k] = False
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j): depth += 1; j += 2
                elif text.startswith("*/", j): depth -= 1; j += 2
                else: j += 1
            for k in range(i, j): mask[k] = False
            i = j
        elif c == '"' or (c == "#" and re.match(r'#+"', text[i:])):
            hashes = len(re.match(r"#*", text[i:]).group(0))
            j = i + hashes
            multi = text.startswith('"""', j)
            quote = '"""' if multi else '"'
            close = quote + "#" * hashes
            j += len(quote)
            while j < n:
                if hashes == 0 and text[j] == "\\":
                    j += 2; continue
                if text.startswith(close, j):
                    j += len(close); break
                if not multi and text[j] == "\n":
                    break
                j += 1
            for k in range(i, j): mask[k] = False
            i = j
        else:
            i += 1
    return mask

changed_files, changed_decls, changed_imports, kept, opens = [], 0, 0, [], []
for path in files:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if "public" not in text and "open" not in text and "package import" not in text:
        continue
    mask = code_mask(text)
    lines = text.split("\n")
    offset = 0
    new_lines = []
    for line in lines:
        m = IMPORT.match(line)
        if m and mask[offset + m.start("acc")]:
            mod = m.group("mod").split(".")[0]
            if (path, mod) in KEEP_PUBLIC:
                want = "public"
            elif (path, mod) in DEMOTE_IMPORT:
                want = ""
            else:
                want = "package" if m.group("acc") == "public" else m.group("acc")
            if want == "public":
                kept.append(f"{path}: public import {mod} ({KEEP_PUBLIC[(path, mod)]})")
            new = line[: m.start("acc")] + (want + " " if want else "") + line[m.end("acc"):].lstrip()
            if want == "":
                new = line[: m.start("acc")] + line[m.end("acc"):].lstrip()
            if new != line:
                changed_imports += 1
            new_lines.append(new)
            offset += len(line) + 1
            continue
        def repl(mm, base=offset):
            global changed_decls
            if not mask[base + mm.start("kw")]:
                return mm.group(0)
            if mm.group("kw") == "open":
                opens.append(f"{path}: {line.strip()}")
                return mm.group(0)
            changed_decls += 1
            return mm.group("pre") + "package" + mm.group("post")
        new_lines.append(DECL.sub(repl, line))
        offset += len(line) + 1
    new_text = "\n".join(new_lines)
    if new_text != text:
        changed_files.append(path)
        if not check:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new_text)

verb = "would change" if check else "changed"
print(f"package-access: {verb} {changed_decls} declaration(s) and {changed_imports} import(s) in {len(changed_files)} file(s)")
for k in kept:
    print(f"  kept: {k}")
for o in opens:
    print(f"  left open (no package-wide open in Swift): {o}")
missing = [k for k in list(KEEP_PUBLIC) + list(DEMOTE_IMPORT) if not os.path.exists(k[0])]
for path, mod in missing:
    print(f"  note: exception for {path} ({mod}) names a file that no longer exists", file=sys.stderr)
if check and changed_files:
    sys.exit(1)
PY
}

# Reads a build log; rewrites the exceptions file and the imports the diagnostics name. Prints how
# many corrections it made.
learn() {
LOG=$1 python3 - <<'PY'
import os, re
root = os.getcwd() + "/"
log = open(os.environ["LOG"], encoding="utf-8", errors="replace").read()
exc_path = "scripts/dev/package-access.exceptions"
exc = open(exc_path, encoding="utf-8").read().splitlines()
def rel(p): return p[len(root):] if p.startswith(root) else p
wanted = {}  # (file, module) -> "public" | "package" | "" (plain import)
for m in re.finditer(r"^(/\S+\.swift):\d+:\d+: warning: (package|public) import of '(\w+)' was not used in", log, re.M):
    wanted[(rel(m[1]), m[3])] = "" if m[2] == "package" else "package"
for m in re.finditer(r"^(/\S+\.swift):\d+:\d+: error: .*; '(\w+)' was not imported publicly", log, re.M):
    wanted[(rel(m[1]), m[2])] = "public"
for m in re.finditer(r"^(/\S+\.swift):\d+:\d+: note: .* is imported by this file as '(?:private|fileprivate|internal)' from '(\w+)'", log, re.M):
    wanted[(rel(m[1]), m[2])] = "package"
n = 0
for (path, mod), acc in sorted(wanted.items()):
    if not os.path.exists(path):
        continue
    text = open(path, encoding="utf-8").read()
    pat = re.compile(r"^(\s*(?:@\w+\s+)*)(?:(?:public|package|internal)\s+)?import\s+" + re.escape(mod) + r"\b", re.M)
    new = pat.sub(lambda m: m[1] + (acc + " " if acc else "") + "import " + mod, text, count=1)
    if new != text:
        open(path, "w", encoding="utf-8").write(new)
    key = f" {path} {mod}"
    exc = [l for l in exc if not (l.split("#")[0].rstrip().endswith(key) and l.split()[0] in ("keep-public", "plain-import"))]
    if acc == "public":
        exc.append(f"keep-public {path} {mod}  # learned from the compiler: a public use needs it")
    elif acc == "":
        exc.append(f"plain-import {path} {mod}  # learned from the compiler: no package declaration uses it")
    print(f"  {path}: {(acc + ' ') if acc else ''}import {mod}")
    n += 1
open(exc_path, "w", encoding="utf-8").write("\n".join(exc) + "\n")
print(f"corrections: {n}")
PY
}

convert
[[ "$mode" == --build ]] || exit 0

export PATH=/opt/swift/usr/bin:$PATH
mkdir -p .build
log=.build/package-access-build.log
git ls-files -- 'Sources/*.swift' 'Tests/*.swift' | xargs grep -lE '^\s*(public|package) import ' | xargs touch
for round in 1 2 3 4; do
    echo "package-access: build $round (log: $log)"
    status=0
    swift build --build-tests >"$log" 2>&1 || status=$?
    out=$(learn "$log")
    echo "$out"
    if [[ "$out" == *"corrections: 0" ]]; then
        if [[ $status -ne 0 ]]; then
            echo "package-access: the build fails for another reason:" >&2
            grep -E '^/.*: error: ' "$log" | sort -u | head -20 >&2
            exit 1
        fi
        echo "package-access: the build is clean of access-level import diagnostics"
        exit 0
    fi
done
echo "package-access: still correcting after 4 builds; see $log" >&2
exit 1
