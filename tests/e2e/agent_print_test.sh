#!/usr/bin/env bash
# --print and -p without a terminal: the prompt runs to the end, the final answer alone goes
# to stdout, a failure exits non-zero, and nobody is ever asked, not even with
# --ask-sandbox-off on a terminal. Commands never see Caretz's API key, nor the audit log and
# transcripts that record what was offered.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/agent_lib.sh"
own_home
ws=$(new_workspace)
out=$(new_outside_dir)
trap 'agent_cleanup; rm -rf "$ws" "$out"' EXIT

# print_as_user ARGS...: runs Caretz without a terminal; sets STDOUT, STDERR and RC.
print_as_user() {
    STDOUT=$(as_user /bin/bash "$ws" "$E2E_BIN" "$@" 2>"$AGENT_TMP/stderr" <"$AGENT_TMP/stdin")
    RC=$?
    STDERR=$(cat "$AGENT_TMP/stderr")
}
: >"$AGENT_TMP/stdin"

start_model "$(
    cat <<EOF
[
  {"text": "Looking.", "tool_calls": [{"name": "shell", "arguments": {"command": "touch $out/p"}}]},
  {"tool_calls": [{"name": "shell", "arguments": {"command": "env"}}]},
  {"tool_calls": [{"name": "shell", "arguments": {"command": "ls ~/.local/state/caretz"}}]},
  {"text": "FINAL ANSWER: the folder is read-only."}
]
EOF
)"
model_env openai
print_as_user --ask-sandbox-off --print -p "touch the file"
check "--print exits 0 when the model answers" test "$RC" -eq 0
check "stdout holds the final answer alone" test "$STDOUT" == "FINAL ANSWER: the folder is read-only."
check "--print never asks: no offer" not_contains "$STDOUT$STDERR" "choice>"
check "... the refusal is told on stderr, saying why nobody was asked" \
    contains "$STDERR" "nobody was asked (there is no terminal to ask on)"
check "... and the model gets the sandboxed result" \
    test "$(tool_result 2)" == "exit status: 1
touch: cannot touch '$out/p': Read-only file system"
check "nothing ran outside" test ! -e "$out/p"
check "what ran is shown on stderr" contains "$STDERR" "\$ touch $out/p"
env_result=$(tool_result 3)
check "the sandboxed env ran" contains "$env_result" "HOME=$TEST_HOME"
check "CARETZ_API_KEY never appears in a sandboxed command's environment" \
    not_contains "$env_result" "$API_KEY"
check "... nor does the variable's name" not_contains "$env_result" "CARETZ_API_KEY"
check "the audit log and transcripts are hidden from the sandbox" \
    contains "$(tool_result 4)" "No such file or directory"

start_model '[{"text": "FROM STDIN"}]'
model_env openai
echo "the prompt on stdin" >"$AGENT_TMP/stdin"
print_as_user --print
check "--print without -p reads the prompt from stdin" test "$(first_user 1)" == "the prompt on stdin"
check "... and prints the answer" test "$STDOUT" == "FROM STDIN"
: >"$AGENT_TMP/stdin"
print_as_user --print
check "--print with no prompt at all exits 2" test "$RC" -eq 2
check "... saying how to give one" contains "$STDERR" "-p PROMPT"

start_model '[{"text": "NO TERMINAL"}]'
model_env openai
print_as_user -p "hello"
check "-p without a terminal runs the prompt to the end" test "$STDOUT" == "NO TERMINAL"

start_model '[{"status": 401, "body": {"error": {"message": "Incorrect API key provided"}}}]'
model_env openai
print_as_user --print -p "hello"
check "--print exits non-zero when the model API fails" test "$RC" -eq 1
check "... with the reason on stderr" contains "$STDERR" "rejected the API key (HTTP 401: Incorrect API key provided)"
check "... and nothing on stdout" test -z "$STDOUT"

start_model "$(
    cat <<EOF
[
  {"tool_calls": [{"name": "shell", "arguments": {"command": "touch $out/t"}}]},
  {"text": "TERMINAL ANSWER"}
]
EOF
)"
model_env openai
tmux_caretz /bin/bash "$ws" --ask-sandbox-off --print -p "touch it"
check_screen "--print on a terminal runs to the end" "CARETZ-EXITED 0"
check "... printing the answer" contains "$(screen_text)" "TERMINAL ANSWER"
check "... without asking, even with --ask-sandbox-off" not_contains "$(screen_text)" "choice>"
check "... and nothing ran outside" test ! -e "$out/t"

man_text=$(MANWIDTH=100 man -l "$(dirname "$0")/../../man/caretz.1" 2>&1)
for topic in CARETZ_BASE_URL CARETZ_MODEL CARETZ_API_KEY ANTHROPIC_API_KEY "-p PROMPT" /plan \
    /allowances "caretz/sessions/SESSION.jsonl"; do
    check "the man page documents $topic" contains "$man_text" "$topic"
done
check "the README has a section on using a model" \
    contains "$(cat "$(dirname "$0")/../../README.md")" "## Using a model"

finish
