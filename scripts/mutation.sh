#!/usr/bin/env bash
# Mutation testing of the guarded code with mutmut (not in CI: a module takes 5-30 minutes on
# two shared cores). Each module is mutated against its own tests only, in a scratch copy of
# this working tree (mutmut writes its mutants/ folder there), with pyproject.toml's
# [tool.mutmut] settings plus the module and its tests. The scores go in docs/mutation.md.
#
#   bash scripts/mutation.sh               every module below
#   bash scripts/mutation.sh redaction     the modules whose path holds a word
#
# mutmut runs in a pid namespace (bubblewrap, required): on 2026-12-06 a mutant of
# children.py's `_live_groups` (`and` as `or`) made an in-process stop SIGTERM every process
# group on the machine, the run's own mutmut among them.
#
# Each mutant not killed is listed (`mutmut show NAME` in the copy, kept in .mutation/MODULE,
# prints its diff), then the counts and the score: killed (a timeout counts: the mutant hung)
# over all mutants, those no test reaches included.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# Each guarded module with its own tests, "module|test test ...", from the one list of them:
# scripts/coverage_report.py's GUARDED (the tests CI holds to the coverage floor).
mapfile -t MODULES < <(python3 -c '
import runpy
for module, tests in runpy.run_path("scripts/coverage_report.py")["GUARDED"].items():
    print(module + "|" + " ".join(tests))')

[ -x .venv/bin/mutmut ] || .venv/bin/pip install -q "mutmut>=3.8,<4"

toml_list() { printf '"%s", ' "$@" | sed 's/, $//'; }
in_namespace() { bwrap --dev-bind / / --proc /proc --unshare-pid --die-with-parent "$@"; }

for entry in "${MODULES[@]}"; do
  module=${entry%%|*}
  read -r -a tests <<<"${entry#*|}"
  if [ $# -gt 0 ] && ! [[ $module == *"$1"* ]]; then
    continue
  fi
  name=$(basename "$module" .py)
  copy=$root/.mutation/$name
  rm -rf "$copy" && mkdir -p "$copy"
  git ls-files -z --cached --others --exclude-standard | tar --null -T - -c | tar -x -C "$copy"
  sed -i "/^\[tool.mutmut\]/a only_mutate = [\"$module\"]\npytest_add_cli_args_test_selection = [$(toml_list "${tests[@]}")]" \
    "$copy/pyproject.toml"
  echo "== $module against ${tests[*]}"
  # In a pid namespace of its own: a mutant of children.py that widens a kill (every process
  # on the machine instead of di-code's descendants) reaches only this run's processes.
  (cd "$copy" && in_namespace "$root/.venv/bin/mutmut" run --max-children 2 >run.log 2>&1 || true
   # mutmut runs a mutant only against the tests it saw call the mutated function in the test
   # process: a test that runs the module in a program of its own (children's stop at exit,
   # a batch task's death signal, a user without rights) is never asked. So each mutant that
   # survived, or that no test reached, is run again against all of the module's tests.
   mapfile -t again < <("$root/.venv/bin/python" "$root/scripts/mutation_again.py")
   if [ ${#again[@]} -gt 0 ]; then
     in_namespace "$root/.venv/bin/mutmut" run --max-children 2 "${again[@]}" >again.log 2>&1 || true
   fi
   "$root/.venv/bin/mutmut" results --all true >results.txt 2>/dev/null || true
   grep -v ": killed$" results.txt || true
   awk -F': ' '{count[$NF]++; n++} $NF == "killed" || $NF == "timeout" {dead++}
     END {for (s in count) printf "%s %d, ", s, count[s]; printf "score %.1f%% of %d\n", 100 * dead / n, n}' \
     results.txt)
done
