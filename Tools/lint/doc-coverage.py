#!/usr/bin/env python3
"""Every public declaration has a `///` comment, except a protocol witness: DocC shows the
requirement's documentation for it, so "Implements `X`" lines add nothing (issue 31). A public
member whose name is a requirement of a protocol (declared in the repository, or a standard
one below) may go undocumented. Prints each undocumented declaration; exits 1 if there is one."""
import re
import subprocess
import sys

STANDARD = {
    "description", "debugDescription", "hash", "encode", "init(from", "init(rawValue", "==", "<", "makeIterator", "next",
    "response", "run", "validate", "errorDescription", "localizedDescription", "log", "metadata", "logLevel",
    "subscript", "id", "rawValue", "handle", "makeAsyncIterator", "callAsFunction",
}
DECL = re.compile(
    r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:nonisolated|final|override|static|class|mutating|convenience|required)\s+)*"
    r"public\s+(?:(?:nonisolated|final|override|static|class|mutating|convenience|required|private\(set\))\s+)*"
    r"(func|var|let|init|subscript|struct|enum|class|actor|protocol|typealias|case)\b\s*([\w`]*)"
)
REQUIREMENT = re.compile(r"^\s*(?:@[\w.]+\s+)*(?:static\s+|mutating\s+|nonisolated\s+)*(func|var|init|subscript)\b\s*([\w`]*)")


def files(patterns):
    out = subprocess.run(["git", "ls-files", *patterns], capture_output=True, text=True, check=True).stdout
    return [f for f in out.split() if f.endswith(".swift") and not f.startswith("Examples/")]


def init_key(line):
    """An initializer by its first argument label: `init(everyFieldOf`."""
    match = re.search(r"init\??\(\s*(\w*)", line)
    return "init(" + (match.group(1) if match else "")


def requirements(paths):
    names = set(STANDARD)
    for path in paths:
        depth = None
        for line in open(path, encoding="utf-8"):
            if depth is None:
                if re.match(r"^\s*(public\s+)?protocol\s+\w+", line) and "{" in line:
                    depth = line.count("{") - line.count("}")
                continue
            match = REQUIREMENT.match(line)
            if match:
                names.add(init_key(line) if match.group(1) == "init" else match.group(2) or match.group(1))
            depth += line.count("{") - line.count("}")
            if depth <= 0:
                depth = None
    return names


def main():
    paths = files(["Modules", "App", "Tools"])
    witnesses = requirements(paths)
    missing = []
    for path in paths:
        lines = open(path, encoding="utf-8").read().split("\n")
        for index, line in enumerate(lines):
            match = DECL.match(line)
            if not match:
                continue
            # Back over the declaration's attributes (which may span lines) to its comment.
            previous = index - 1
            while previous >= 0:
                text = lines[previous].strip()
                if text.startswith("///") or not text or text.endswith(("{", "}")) or DECL.match(lines[previous]):
                    break
                previous -= 1
            if previous >= 0 and lines[previous].strip().startswith("///"):
                continue
            kind, name = match.group(1), match.group(2)
            key = init_key(line) if kind == "init" else name or kind
            if kind in ("func", "var", "let", "init", "subscript") and key in witnesses:
                continue
            missing.append(f"{path}:{index + 1}: public {kind} {name} has no /// comment")
    print("\n".join(missing) if missing else "doc coverage: every public declaration that is not a witness is documented")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
