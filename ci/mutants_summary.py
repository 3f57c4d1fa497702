"""The summary of a cargo-mutants run (ci/mutants.sh, ci/mutants-vision.sh): the kill rate per module
and in all — caught / (caught + missed), unviable mutants apart — and the same counting the mutants
listed as equivalent, then every survivor compared with the list of known ones ("name — reason").

Usage: mutants_summary.py OUT_DIR KNOWN_FILE ALL_FILE UNVIABLE_EARLIER PREFIX
OUT_DIR is cargo-mutants' mutants.out; ALL_FILE every mutant of the files run (`cargo mutants --list`);
UNVIABLE_EARLIER what earlier --iterate runs found unviable (may be missing); PREFIX is cut from the
file names to name the modules.
"""
import os, sys
from collections import Counter
out, known_file, all_file, unviable_earlier, prefix = sys.argv[1:6]
def lines(name):
    path = os.path.join(out, name)  # an absolute name stays as it is
    return {l.strip() for l in open(path) if l.strip()} if os.path.exists(path) else set()
everything = {l.strip() for l in open(all_file) if l.strip()}
# With --iterate, what earlier runs caught is listed apart and counts as caught; a name the code no
# longer has (lines moved) counts for nothing.
missed, timeout, unviable = (lines(n) & everything for n in ("missed.txt", "timeout.txt", "unviable.txt"))
unviable |= lines(os.path.abspath(unviable_earlier)) & everything
caught = ((lines("caught.txt") | lines("previously_caught.txt")) & everything) - unviable
explained = {}
for line in open(known_file):
    if line.strip() and not line.startswith("#"):
        name, _, why = line.partition(" — ")
        explained[name.strip()] = why.strip()
equivalent = {n for n, why in explained.items() if why.startswith("equivalent")}
left_out = (equivalent & everything) - caught - missed
module = lambda name: name.split(":")[0].removeprefix(prefix)
count = lambda names: Counter(module(n) for n in names)
c, m, e, a, u = count(caught), count(missed), count(left_out), count(everything), count(unviable)
print(f"{'module':<22} {'mutants':>7} {'caught':>6} {'missed':>6} {'equiv.':>6} {'unviable':>8} {'untested':>8} {'kill rate':>9} {'with equiv.':>11}")
def row(label, c, m, e, a, u):
    rate = f"{100 * c / (c + m):.1f} %" if c + m else "-"
    raw = f"{100 * c / (c + m + e):.1f} %" if c + m + e else "-"
    print(f"{label:<22} {a:>7} {c:>6} {m:>6} {e:>6} {u:>8} {a - c - m - e - u:>8} {rate:>9} {raw:>11}")
for name in sorted(a):
    row(name, c[name], m[name], e[name], a[name], u[name])
row("all", len(caught), len(missed), len(left_out), len(everything), len(unviable))
print(f"mutants: {len(caught)} caught, {len(missed)} missed, {len(timeout)} timed out, {len(unviable)} unviable, "
      f"{len(left_out)} equivalent left out: kill rate {100 * len(caught) / max(1, len(caught) + len(missed)):.1f} %")
for mutant in sorted(missed):
    print((f"  known ({known_file}): " if mutant in explained else "  NEW survivor: ") + mutant)
# Only the modules this run listed: a name in another module was not looked for.
for mutant in sorted(n for n in explained if n not in everything and module(n) in a):
    print("  listed in " + known_file + " but no longer a mutant (the code moved; read it again): " + mutant)
