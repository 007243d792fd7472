#!/usr/bin/env bash
# Citations a clone can follow (ctest `citations_in_repository`): no tracked file cites the shared folder
# beside the development checkout (../shared/… or a bare shared/validation/…, which a clone lacks), and every docs/reference/… path cited
# exists in the repository. Usage: tests/docs/citations.sh SOURCE_DIR
set -uo pipefail
cd "${1:?source dir}" || exit 2
failed=0
files=$(git ls-files -- '*.md' '*.yaml' '*.cpp' '*.hpp' '*.py' '*.csv' '*.sh' '*.txt' 2>/dev/null | grep -v '^docs/reference/' | grep -v '^tests/docs/citations.sh$')
[[ -n $files ]] || files=$(find . -path ./build -prune -o -type f \( -name '*.md' -o -name '*.yaml' -o -name '*.cpp' -o -name '*.hpp' \) -print | grep -v '^./docs/reference/')
while IFS= read -r hit; do
  echo "FAIL $hit: cites the shared folder outside the repository (copy the file into docs/reference/ and cite that)"
  failed=$((failed + 1))
done < <(grep -n -o -E '(\.\./|(^|[^A-Za-z0-9_./-]))shared/(validation|reference|seeds|DESIGN|STYLE)[A-Za-z0-9_./-]*' $files)
while IFS=: read -r file line path; do
  path=${path%.}
  [[ -e $path ]] && continue
  echo "FAIL $file:$line: cites $path, which is not in the repository"
  failed=$((failed + 1))
done < <(grep -n -o -E 'docs/reference/[A-Za-z0-9_./-]*[A-Za-z0-9_/-]' $files)
echo "citations: $failed failed"
[[ $failed -eq 0 ]]
