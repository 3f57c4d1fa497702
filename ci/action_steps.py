"""What GitHub's schema cannot see in action/action.yml: the steps' order and conditions.

Run by ci/action-check.sh (with ci/interop/.venv's Python, for ruamel.yaml): checks the file named on
the command line and exits 1 naming every rule it breaks.

- The build cache is split: `actions/cache/restore` (id `cache`) before the build (id `build`), and
  `actions/cache/save` after the run (id `run`) under `always()` or `!cancelled()` and only once the
  build succeeded, with the same paths and the restore's primary key. The combined `actions/cache`
  saves only when the job succeeds, so a server failing a MUST would rebuild mediacheck on every push.
- Every input but `artifact-name` reaches the run step as `INPUT_<NAME>: ${{ inputs.<name> }}` (the
  way action/run.sh reads it), so no input is silently dropped (as `browser` once was).
"""

import sys

from ruamel.yaml import YAML

# Inputs the action's own steps use, not action/run.sh.
NOT_FOR_RUN_SH = {"artifact-name"}


def problems(action):
    found = []
    steps = action["runs"]["steps"]
    at = {step.get("id"): i for i, step in enumerate(steps) if step.get("id")}
    uses = [str(step.get("uses", "")) for step in steps]
    for i, used in enumerate(uses):
        if used.startswith("actions/cache@"):
            found.append(f"step {i + 1} uses {used}: it saves only when the job succeeds; restore and save apart")
    restore = [i for i, used in enumerate(uses) if used.startswith("actions/cache/restore@")]
    save = [i for i, used in enumerate(uses) if used.startswith("actions/cache/save@")]
    for name in ("cache", "build", "run"):
        if name not in at:
            found.append(f"no step with id {name}")
    if found:
        return found
    if restore != [at["cache"]] or not at["cache"] < at["build"]:
        found.append("the step with id cache must be the one actions/cache/restore, before the build")
    if len(save) != 1 or not save[0] > at["run"]:
        found.append("one actions/cache/save step must come after the run")
        return found
    saving = steps[save[0]]
    condition = str(saving.get("if", ""))
    if "always()" not in condition and "!cancelled()" not in condition:
        found.append(f"the save's if ({condition!r}) lacks always() or !cancelled(): a failed run would skip it")
    if "steps.build.outcome == 'success'" not in condition:
        found.append(f"the save's if ({condition!r}) must ask steps.build.outcome == 'success'")
    restored = steps[at["cache"]].get("with", {})
    saved = saving.get("with", {})
    if str(saved.get("path", "")).split() != str(restored.get("path", "")).split():
        found.append("the save's paths differ from the restore's")
    if str(saved.get("key", "")).replace(" ", "") != "${{steps.cache.outputs.cache-primary-key}}":
        found.append(f"the save's key ({saved.get('key')!r}) must be the restore's cache-primary-key")
    env = steps[at["run"]].get("env", {})
    for name in action.get("inputs", {}):
        if name in NOT_FOR_RUN_SH:
            continue
        variable = "INPUT_" + name.upper().replace("-", "_")
        if str(env.get(variable, "")).replace(" ", "") != "${{inputs." + name + "}}":
            found.append(f"the input {name} does not reach run.sh as {variable}")
    return found


def main():
    path = sys.argv[1]
    with open(path, encoding="utf-8") as file:
        action = YAML(typ="safe").load(file)
    found = problems(action)
    for problem in found:
        print(f"action_steps: {path}: {problem}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
