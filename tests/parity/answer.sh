# A command executor for the script-executor parity test: it answers each sample with its case.
#
# Run as `sh answer.sh ANSWERS_DIR`. The request comes on stdin as one line of JSON; its prompt is
# the sample id (both runners send `prompt`: pytest-omk as `"prompt": "case-7"`, the reference as
# `"prompt":"case-7"`). It prints ANSWERS_DIR/<id>.json (the case's output and telemetry as
# protocol JSON) and, when the executor passed mocks through OMK_MOCKS_FILE, copies
# ANSWERS_DIR/<id>.hits.json to hits.json beside that file, as a tool-call hook would: both runners
# take mockStats from there. Plain POSIX sh with builtins only: it starts 2 x 250 times a run,
# where a Python interpreter's start cost ~20 ms of CPU each.
IFS= read -r request || :
id=${request#*\"prompt\":}
id=${id# }
id=${id#\"}
id=${id%%\"*}
IFS= read -r answer <"$1/$id.json" || :
if [ -n "${OMK_MOCKS_FILE:-}" ]; then
  IFS= read -r hits <"$1/$id.hits.json" || :
  printf '%s' "$hits" >"${OMK_MOCKS_FILE%/*}/hits.json"
fi
printf '%s' "$answer"
