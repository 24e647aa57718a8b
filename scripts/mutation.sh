#!/usr/bin/env bash
# Mutation testing of the guarded code with mutmut (not in CI: a module takes 5-30 minutes on
# two shared cores). Each module is mutated against its own tests only, in a scratch copy of
# this working tree (mutmut writes its mutants/ folder there), with pyproject.toml's
# [tool.mutmut] settings plus the module and its tests. The scores go in docs/mutation.md.
#
#   bash scripts/mutation.sh               every module below
#   bash scripts/mutation.sh redaction     the modules whose path holds a word
#   bash scripts/mutation.sh undo_plan 'di_code.session.undo_plan.x_plan__mutmut_*' ...
#                                          only the mutants of those names (mutmut's globs), in
#                                          the module's copy kept from the last run: a slow
#                                          module taken function by function, each run adding
#                                          to the results of the ones before
#   DI_CODE_UNDO_EXAMPLES=2 bash scripts/mutation.sh undo_plan ...
#                                          a first pass with undo's property test at 2 random
#                                          examples (20 fixed otherwise); its survivors are then
#                                          looked at by hand (docs/mutation.md)
#   MUTATION_TIMEOUT=60 bash scripts/mutation.sh ...
#                                          pyproject.toml's timeout_constant replaced: a mutant's
#                                          wall-time bound is (its tests' time + this) x 3, and
#                                          at nice 19 on a loaded machine a survivor can need
#                                          more (mutmut then calls it a timeout, counted as
#                                          killed); a run by name with a larger value checks the
#                                          timeouts again (mutmut resets only those)
#
# mutmut runs each mutant against only the tests it saw reach the mutated function (its stats
# run), stopping at the first failure; scripts/mutation_order.py (a pytest plugin) orders those
# tests fastest first by the durations mutmut recorded, so a killed mutant costs about its
# fastest killing test, not a 10 s property test that happened to come first.
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
# In a pid namespace and a session of its own: a mutant of children.py that widens a kill
# (every process on the machine instead of di-code's descendants) reaches only this run's
# processes. The session matters too: a process group is not bound to a namespace, and inside
# it the group of a leader outside reads as 0, which a kill takes for the caller's own group.
in_namespace() { bwrap --dev-bind / / --proc /proc --unshare-pid --new-session --die-with-parent "$@"; }
unchecked() { "$root/.venv/bin/mutmut" results --all true 2>/dev/null | grep -c ": not checked$"; }

for entry in "${MODULES[@]}"; do
  module=${entry%%|*}
  read -r -a tests <<<"${entry#*|}"
  if [ $# -gt 0 ] && ! [[ $module == *"$1"* ]]; then
    continue
  fi
  name=$(basename "$module" .py)
  copy=$root/.mutation/$name
  names=("${@:2}")
  if [ ${#names[@]} -eq 0 ] || ! [ -d "$copy/mutants" ]; then
    rm -rf "$copy" && mkdir -p "$copy"
    git ls-files -z --cached --others --exclude-standard | tar --null -T - -c | tar -x -C "$copy"
  else  # the tests as they are now (mutmut copies them on into mutants/ and sees the change)
    git ls-files -z --cached --others --exclude-standard -- tests scripts pyproject.toml |
      tar --null -T - -c | tar -x -C "$copy"
  fi
  sed -i -e "/^\[tool.mutmut\]/a only_mutate = [\"$module\"]\npytest_add_cli_args_test_selection = [$(toml_list "${tests[@]}")]" \
    -e 's/^pytest_add_cli_args = \[/pytest_add_cli_args = ["-p", "mutation_order", /' \
    "$copy/pyproject.toml"
  if [ -n "${MUTATION_TIMEOUT:-}" ]; then
    sed -i "s/^timeout_constant = .*/timeout_constant = $MUTATION_TIMEOUT/" "$copy/pyproject.toml"
  fi
  echo "== $module against ${tests[*]}${names[*]:+ (only ${names[*]})}"
  # A mutant that ends mutmut itself (a kill of every group in the namespace) stops the run
  # part-way; it is taken up again where it stopped, twice at most (a run of named mutants
  # leaves the others unchecked: it is not taken up).
  (cd "$copy" && export PYTHONPATH=$copy/scripts && for _ in 1 2 3; do
     in_namespace "$root/.venv/bin/mutmut" run --max-children 2 "${names[@]}" >>run.log 2>&1 || true
     [ ${#names[@]} -eq 0 ] && [ "$(unchecked)" -gt 0 ] || break
   done
   # mutmut runs a mutant only against the tests it saw call the mutated function in the test
   # process: a test that runs the module in a program of its own (children's stop at exit,
   # a batch task's death signal, a user without rights) is never asked. So each mutant that
   # survived, or that no test reached, is run again against all of the module's tests.
   # One run each: a mutant that kills every group it sees (mutmut's own among them) then
   # ends only its own run, which fails; it is listed in ended.txt and counted killed.
   : >ended.txt
   mapfile -t again < <("$root/.venv/bin/python" "$root/scripts/mutation_again.py")
   for mutant in "${again[@]}"; do
     in_namespace "$root/.venv/bin/mutmut" run --max-children 2 "$mutant" >>again.log 2>&1 ||
       echo "$mutant" >>ended.txt
   done
   "$root/.venv/bin/mutmut" results --all true >results.txt 2>/dev/null || true
   grep -v ": killed$" results.txt || true
   sed 's/^/    ended the run: /' ended.txt
   awk -F': ' 'FILENAME == ARGV[1] {ended[$1]; next}
     {name = $1; sub(/^ +/, "", name); status = name in ended ? "ended the run" : $NF}
     {count[status]++; n++} status ~ /^(killed|timeout|ended the run)$/ {dead++}
     END {for (s in count) printf "%s %d, ", s, count[s]; printf "score %.1f%% of %d\n", 100 * dead / n, n}' \
     ended.txt results.txt)
done
