#pragma once

#include <string>

namespace caretz {

// What the system prompt tells the model about where it works.
struct PromptFacts {
    std::string cwd;
    std::string shell;
    bool plan_mode = false;
    bool subagent = false;
    bool background_jobs = true;  // false with --no-session
    // The AGENTS.md files' text (load_instructions); empty when there are none.
    std::string instructions;
};

// The system prompt. It describes the sandbox the model's commands run in, and nothing else:
// whether anything may ever run outside it is the user's business, not the model's.
std::string system_prompt(const PromptFacts& facts);

}  // namespace caretz
