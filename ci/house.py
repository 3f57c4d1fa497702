"""The house in order (issue #47): no source file over 600 lines, and no Rust files that import each
other. Prints one line per problem and exits 1 if there is any; prints nothing and exits 0 otherwise.

Usage: python3 ci/house.py [--graph | --self-test]   (from anywhere in the repository; stdlib only)

Source files are the *.rs, *.js, *.sh and *.py files git knows (`git ls-files`, and the untracked
ones it does not ignore, so a new file counts before its commit). Lines are counted as `wc -l` does.

Imports: every crate (a folder with a Cargo.toml) is walked from its roots (src/lib.rs, src/main.rs,
src/bin/*.rs, tests/*.rs, benches/*.rs, examples/*.rs, build.rs) along its `mod NAME;` declarations,
which gives each file its module path. A file imports another when it names a module of the other
file by a path — `use crate::a::b`, `use super::x::{y, z}`, `self::…`, a child module's name, and the
same paths written inline in code (`crate::a::f()`) — with comments and strings left out and
`super` counted from any inline module (`mod tests { use super::*; }` is the file itself). A path
goes to the file of its longest prefix that is a module with a file of its own; a re-export counts as
an import of the file that re-exports. Declaring `mod x;` is not an import.

A module and the modules it holds are one unit, as the crate's layers see them (harness/tests/layers.rs
checks those between top-level modules): a parent that registers or re-exports its children while they
use its helpers (`cases.rs` and its cases, `broken/wire.rs` and its sections) is not a circle, so
imports between a file and its ancestors or descendants are left out. Two other files that import each
other are one problem; a longer cycle that no such pair explains is another. `--graph` prints the
edges counted (file -> file), for reading; `--self-test` runs it on a planted crate that must fail.
"""
import os
import re
import subprocess
import sys

MAX_LINES = 600
SOURCE_SUFFIXES = (".rs", ".js", ".sh", ".py")


def repo_root():
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=here, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def known_files(root):
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root, capture_output=True, check=True,
    )
    names = sorted({n.decode() for n in out.stdout.split(b"\0") if n})
    return [n for n in names if os.path.isfile(os.path.join(root, n))]


def line_count(path):
    with open(path, "rb") as f:
        return f.read().count(b"\n")


# --- Rust source, comments and strings left out -------------------------------------------------

def strip_rust(text):
    """The text with comments, string and char literals replaced by spaces (newlines kept), so that
    braces and paths inside them are not read."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
        elif (m := re.compile(r'b?r(#*)"').match(text, i)) and not is_ident_char(text, i - 1):
            end = text.find('"' + m.group(1), m.end())
            j = n if end < 0 else end + 1 + len(m.group(1))
            out.append(blank(text[i:j]))
            i = j
        elif c == '"' or (text.startswith('b"', i) and not is_ident_char(text, i - 1)):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(blank(text[i:j + 1]))
            i = j + 1
        elif c == "'" or (text.startswith("b'", i) and not is_ident_char(text, i - 1)):
            # A char literal ('x', '\n', '\u{1F600}', b'x'), or a lifetime ('a), which stays.
            j = i + (2 if c == "b" else 1)
            m = re.compile(r"(\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|\\.|[^\\'])'").match(text, j)
            if m:
                out.append(blank(text[i:m.end()]))
                i = m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def is_ident_char(text, i):
    return i >= 0 and (text[i].isalnum() or text[i] == "_")


def blank(s):
    return "".join("\n" if ch == "\n" else " " for ch in s)


# --- Crates, their module trees --------------------------------------------------------------------

MOD_DECL = re.compile(r"\bmod\s+(r#)?([A-Za-z_][A-Za-z0-9_]*)\s*([;{])")


def inline_modules(code):
    """(start, end, path) of every inline `mod x { … }` in stripped code, nested ones with their full
    path within the file."""
    found = []
    stack = []  # (name, depth at which it closes)
    depth = 0
    opening = {m.end() - 1: m.group(2) for m in MOD_DECL.finditer(code) if m.group(3) == "{"}
    for i, ch in enumerate(code):
        if ch == "{":
            if i in opening:
                stack.append((opening[i], depth, i))
            depth += 1
        elif ch == "}":
            depth -= 1
            if stack and stack[-1][1] == depth:
                name, _, start = stack.pop()
                found.append((start, i, [s[0] for s in stack] + [name]))
    return found


def inline_path_at(inlines, pos):
    best = []
    for start, end, path in inlines:
        if start < pos < end and len(path) > len(best):
            best = path
    return best


class Crate:
    def __init__(self, root, folder, rust_files):
        self.folder = folder  # relative to the repository root
        self.modules = {}  # (root file, module path tuple) -> file
        self.file_module = {}  # file -> (root file, module path tuple)
        self.children = {}  # file -> {name: file} for the file's own module (not inline ones)
        for entry in self.roots(rust_files):
            self.walk(root, entry, entry, (), True)

    def roots(self, rust_files):
        prefix = "" if self.folder == "." else self.folder + "/"
        roots = []
        for name in (prefix + "src/lib.rs", prefix + "src/main.rs", prefix + "build.rs"):
            if name in rust_files:
                roots.append(name)
        for sub in ("src/bin/", "tests/", "benches/", "examples/"):
            for name in rust_files:
                rest = name[len(prefix + sub):] if name.startswith(prefix + sub) else None
                if rest and "/" not in rest:
                    roots.append(name)
                elif rest and rest.count("/") == 1 and rest.endswith("/main.rs"):
                    roots.append(name)
        return roots

    def walk(self, root, crate_root, file, path, owns_folder):
        if file in self.file_module:
            return
        self.file_module[file] = (crate_root, path)
        self.modules[(crate_root, path)] = file
        self.children[file] = {}
        with open(os.path.join(root, file), encoding="utf-8", errors="replace") as f:
            code = strip_rust(f.read())
        inlines = inline_modules(code)
        base = os.path.dirname(file) if owns_folder else os.path.splitext(file)[0]
        for m in MOD_DECL.finditer(code):
            if m.group(3) != ";":
                continue
            name = m.group(2)
            inner = inline_path_at(inlines, m.start())
            folder = os.path.join(base, *inner)
            for candidate, owns in ((os.path.join(folder, name + ".rs"), False), (os.path.join(folder, name, "mod.rs"), True)):
                if os.path.isfile(os.path.join(root, candidate)):
                    candidate = os.path.normpath(candidate)
                    if not inner:
                        self.children[file][name] = candidate
                    self.walk(root, crate_root, candidate, path + tuple(inner) + (name,), owns)
                    break


# --- The paths a file names ----------------------------------------------------------------------

IDENT = r"(?:r#)?[A-Za-z_][A-Za-z0-9_]*"
USE = re.compile(r"\buse\s+")
INLINE_PATH = re.compile(r"(?<![A-Za-z0-9_:])((?:crate|super|self)(?:\s*::\s*" + IDENT + r")+)")


def use_trees(code):
    """(position, [segments]) for every path a `use` declaration names, groups expanded."""
    for m in USE.finditer(code):
        if is_ident_char(code, m.start() - 1):
            continue
        end = code.find(";", m.end())
        if end < 0:
            continue
        for segments in expand(code[m.end():end]):
            yield m.start(), segments


def expand(tree):
    """`a::{b, c::{d, e}}` -> [[a, b], [a, c, d], [a, c, e]] (`self` in a group names the prefix)."""
    tree = tree.strip()
    if not tree:
        return []
    brace = tree.find("{")
    if brace < 0:
        head = [s.strip() for s in tree.split(" as ")[0].split("::") if s.strip()]
        return [head] if head else []
    prefix = [s.strip() for s in tree[:brace].split("::") if s.strip()]
    inner = tree[brace + 1:tree.rfind("}")]
    items, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(inner[start:i])
            start = i + 1
    items.append(inner[start:])
    paths = []
    for item in items:
        for sub in expand(item):
            paths.append(prefix if sub == ["self"] else prefix + sub)
    return paths or [prefix]


def resolve(crate, file, inline, segments):
    """The file a path names from `file` (inside its inline module `inline`), or None."""
    crate_root, here = crate.file_module[file]
    current = list(here) + list(inline)
    segs = [s.removeprefix("r#") for s in segments if s != "*"]
    if not segs:
        return None
    if segs[0] == "crate":
        absolute = segs[1:]
    elif segs[0] in ("super", "self"):
        absolute = list(current)
        while segs and segs[0] in ("super", "self"):
            if segs.pop(0) == "super":
                if not absolute:
                    return None
                absolute.pop()
        absolute += segs
    elif not inline and segs[0] in crate.children.get(file, {}):
        absolute = list(here) + segs
    else:
        return None  # another crate, the prelude, or a name brought in by an earlier `use`
    for cut in range(len(absolute), -1, -1):
        target = crate.modules.get((crate_root, tuple(absolute[:cut])))
        if target:
            return target
    return None


def imports(root, crate, file):
    with open(os.path.join(root, file), encoding="utf-8", errors="replace") as f:
        code = strip_rust(f.read())
    inlines = inline_modules(code)
    named = set()
    for pos, segments in use_trees(code):
        named.add(resolve(crate, file, inline_path_at(inlines, pos), segments))
    for m in INLINE_PATH.finditer(code):
        segments = [s.strip() for s in m.group(1).split("::")]
        named.add(resolve(crate, file, inline_path_at(inlines, m.start()), segments))
    named.discard(None)
    named.discard(file)
    return named


# --- Cycles --------------------------------------------------------------------------------------

def components(graph):
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return sorted(found)


def a_cycle(graph, group):
    """A shortest cycle through the group's first file, within the group."""
    members = set(group)
    start = group[0]
    previous = {start: None}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                path = [node]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                return list(reversed(path)) + [start]
            if nxt in members and nxt not in previous:
                previous[nxt] = node
                queue.append(nxt)
    return group


def problems(root, files):
    found = []
    for name in files:
        if name.endswith(SOURCE_SUFFIXES):
            lines = line_count(os.path.join(root, name))
            if lines > MAX_LINES:
                found.append(f"{name}: {lines} lines, over {MAX_LINES} (split it by job)")
    graph = import_graph(root, files)
    pairs = set()
    for a in sorted(graph):
        for b in sorted(graph[a]):
            if a < b and a in graph.get(b, ()):
                pairs.add((a, b))
                found.append(f"{a} and {b} import each other (move what both need to a third module)")
    for group in components(graph):
        # A longer cycle, unless the pairs above explain it (fixing them may reveal more).
        without_pairs = {a: {b for b in graph.get(a, ()) if (min(a, b), max(a, b)) not in pairs} for a in group}
        for rest in components(without_pairs):
            found.append("import cycle: " + " -> ".join(a_cycle(without_pairs, rest)))
    return found


def import_graph(root, files):
    """file -> the files it imports, leaving out a module's own ancestors and descendants."""
    rust = {n for n in files if n.endswith(".rs")}
    graph = {}
    for manifest in sorted(n for n in files if os.path.basename(n) == "Cargo.toml"):
        crate = Crate(root, os.path.dirname(manifest) or ".", rust)
        for file in crate.file_module:
            named = {other for other in imports(root, crate, file) if not related(crate, file, other)}
            graph.setdefault(file, set()).update(named)
    return graph


def related(crate, a, b):
    """Whether one of the two files' modules holds the other (a parent and its child, at any depth)."""
    (root_a, path_a), (root_b, path_b) = crate.file_module[a], crate.file_module[b]
    shorter = min(len(path_a), len(path_b))
    return root_a == root_b and path_a[:shorter] == path_b[:shorter]


def self_test():
    """A planted crate: a pair, a cycle of three, a parent and child that use each other, a long file,
    and the paths the reader must see (groups, `super` from an inline module, comments and strings)."""
    import tempfile
    sources = {
        "k/Cargo.toml": "",
        "k/src/lib.rs": "mod a;\nmod b;\nmod c;\nmod d;\nmod e;\npub mod p;\n",
        "k/src/a.rs": "use crate::{b::X, c};\nfn f() {}\n",
        "k/src/b.rs": "pub struct X;\nfn g() { super::a::f() }\n",
        "k/src/c.rs": "use super::d::{self, Z};\nmod tests {\n    use super::super::a::f;\n}\n",
        "k/src/d.rs": "pub struct Z;\nuse crate::e::W;\n",
        "k/src/e.rs": "pub struct W;\nfn h() { crate::c::g() }\n// use crate::d::Z;\n/* crate::d */ const S: &str = \"crate::d::Z\";\n",
        "k/src/p.rs": "mod q;\npub use q::*;\npub fn helper() {}\n",
        "k/src/p/q.rs": "use super::helper;\n",
        "k/tools/long.py": "\n" * (MAX_LINES + 1),
        "k/tools/short.sh": "\n" * MAX_LINES,
    }
    with tempfile.TemporaryDirectory() as root:
        for name, text in sources.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w") as f:
                f.write(text)
        found = problems(root, sorted(sources))
    wanted = [
        f"k/tools/long.py: {MAX_LINES + 1} lines, over {MAX_LINES} (split it by job)",
        "k/src/a.rs and k/src/b.rs import each other (move what both need to a third module)",
        "k/src/a.rs and k/src/c.rs import each other (move what both need to a third module)",
        "import cycle: k/src/c.rs -> k/src/d.rs -> k/src/e.rs -> k/src/c.rs",
    ]
    if found != wanted:
        print("ci/house.py --self-test: found\n  " + "\n  ".join(found) + "\nwanted\n  " + "\n  ".join(wanted))
        return 1
    print("ci/house.py --self-test: the planted long file, pair and cycle are found, nothing else")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = repo_root()
    if sys.argv[1:] == ["--graph"]:
        for a, bs in sorted(import_graph(root, known_files(root)).items()):
            for b in sorted(bs):
                print(f"{a} -> {b}")
        return 0
    found = problems(root, known_files(root))
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
