#!/usr/bin/env bash
# Plan mode, background jobs and subagents never ask, even on a terminal with
# --ask-sandbox-off: plan mode runs commands in a read-only sandbox, background jobs run in the
# session supervisor (output read with job_output, stopped with job_kill), and subagents have
# conversations of their own in the same sandbox session. With --no-session, background jobs
# are refused with a clear reason.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/agent_lib.sh"
own_home
ws=$(new_workspace)
out=$(new_outside_dir)
trap 'agent_cleanup; rm -rf "$ws" "$out"' EXIT

start_model "$(
    cat <<EOF
[
  {"tool_calls": [{"name": "shell", "arguments": {"command": "touch planned; touch $out/plan"}}]},
  {"text": "PLAN-DONE"},
  {"tool_calls": [{"name": "shell", "arguments": {"command": "echo job-started; env; touch $out/bg; echo job-finished", "background": true}}]},
  {"text": "BG-STARTED"},
  {"tool_calls": [{"name": "job_output", "arguments": {"job_id": 1}},
                  {"name": "shell", "arguments": {"command": "sleep 30", "background": true}},
                  {"name": "job_kill", "arguments": {"job_id": 2}}]},
  {"text": "JOBS-DONE"},
  {"tool_calls": [{"name": "task", "arguments": {"prompt": "SUBTASK: touch the outside file"}}]},
  {"tool_calls": [{"name": "shell", "arguments": {"command": "cd /tmp && touch $out/sub"}}]},
  {"text": "SUB-ANSWER: refused"},
  {"tool_calls": [{"name": "shell", "arguments": {"command": "pwd"}}]},
  {"text": "MAIN-DONE"}
]
EOF
)"
model_env openai
tmux_caretz /bin/bash "$ws" --ask-sandbox-off
wait_for_prompt
type_line "/plan"
check_screen "/plan turns plan mode on" "Plan mode is on"
check "... and the prompt says so" wait_for_prompt "caretz (plan)>"
type_line "plan the change"
check_screen "a plan-mode turn runs to its answer" "PLAN-DONE"
check "plan mode's sandbox is read-only: the workspace file was not created" test ! -e "$ws/planned"
check "... the model is told so" contains "$(tool_result 2)" "touch: cannot touch 'planned': Read-only file system"
check "... and its system prompt says plan mode is on" contains "$(system_of 1)" "Plan mode is on"
check "plan mode never asks" not_contains "$(screen_text)" "choice>"
check "... and says why on the terminal" contains "$(screen_text)" "plan mode never runs commands outside the sandbox"
type_line "/plan"
check_screen "/plan again turns it off" "Plan mode is off"

type_line "start the job"
check_screen "a background job starts and the turn goes on" "BG-STARTED"
check "the model gets the job's id" contains "$(tool_result 4)" "started background job 1"
sleep 1
type_line "read the job"
check_screen "job_output and job_kill run" "JOBS-DONE"
job=$(tool_results 6)
check "job_output gives the job's state" contains "$job" "job 1: exited with status 0"
check "... and its output" contains "$job" "job-finished"
check "the job ran in the sandbox: its write was refused" contains "$job" "touch: cannot touch '$out/bg': Read-only file system"
check "... and nothing ran outside" test ! -e "$out/bg"
check "the job's environment has no CARETZ_API_KEY" not_contains "$job" "$API_KEY"
check "job_kill stops a running job" contains "$job" "job 2 stopped: ended by signal 15"
check "background jobs never ask" not_contains "$(screen_text)" "choice>"
type_line "/jobs"
check_screen "/jobs lists the jobs with their state" "2  ended by signal 15  sleep 30"

type_line "delegate it"
check_screen "the subagent's commands are shown, marked" "[subagent 1] \$ cd /tmp && touch $out/sub"
check_screen "the main agent finishes after the subagent" "MAIN-DONE"
check "the subagent starts its own conversation with the task's prompt" \
    test "$(first_user 8)" == "SUBTASK: touch the outside file"
check "... under a subagent's system prompt" contains "$(system_of 8)" "You are a subagent"
check "... without the task tool" not_contains "$(sed -n 8p "$REQUESTS")" '"name": "task"'
check "the subagent gets the sandboxed result" test "$(tool_result 9)" == "exit status: 1
touch: cannot touch '$out/sub': Read-only file system"
check "subagents never ask" not_contains "$(screen_text)" "choice>"
check "... and the terminal says why" contains "$(screen_text)" "subagents never ask"
check "nothing the subagent ran went outside" test ! -e "$out/sub"
check "the main agent gets the subagent's answer" test "$(tool_result 10)" == "SUB-ANSWER: refused"
check "the subagent shares the sandbox session (its cd stays)" contains "$(tool_result 11)" "/tmp"
type_line "/quit"
check_screen "/quit leaves" "CARETZ-EXITED 0"

start_model '[{"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 5", "background": true}}]}, {"text": "OK"}]'
model_env openai
OUT=$(as_user /bin/bash "$ws" "$E2E_BIN" --no-session --print -p "start it" 2>&1 </dev/null)
check "--no-session says that background jobs need session mode" \
    contains "$OUT" "background jobs need session mode"
check "... and the model is told to run it in the foreground" \
    contains "$(tool_result 2)" "run the command in the foreground instead"

finish
