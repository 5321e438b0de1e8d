#include "sandbox/session_phases.h"

namespace caretz {

void SessionPhases::shell_started() {
    shell_exited_ = false;
    phase_ = Phase::idle;
    command_sent();
}

void SessionPhases::command_sent() {
    if (phase_ != Phase::idle) return;
    phase_ = Phase::sent;
    prompt_started_ = false;
    command_started_ = false;
    exit_code_.reset();
}

void SessionPhases::prompt_start() {
    if (phase_ == Phase::sent) prompt_started_ = true;
}

void SessionPhases::prompt_end() {
    switch (phase_) {
        case Phase::sent:
            if (!prompt_started_) return;
            exit_code_ = 130;
            phase_ = Phase::idle;
            return;
        case Phase::finishing:
            phase_ = Phase::idle;
            return;
        default:
            return;
    }
}

void SessionPhases::command_start() {
    if (phase_ != Phase::sent) return;
    phase_ = Phase::running;
    command_started_ = true;
}

void SessionPhases::command_done(int status) {
    if (phase_ != Phase::running) return;
    exit_code_ = status;
    phase_ = Phase::finishing;
}

void SessionPhases::shell_exit(int status) {
    if (phase_ != Phase::finishing) exit_code_ = status;
    shell_exited_ = true;
    phase_ = Phase::idle;
}

}  // namespace caretz
