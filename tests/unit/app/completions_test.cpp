#include "app/completions.h"

#include <catch2/catch.hpp>

using namespace caretz;
using Catch::Matchers::Contains;

namespace {

// A command line shaped like Caretz's: shared options on the program and its subcommands, a
// prefix command, a hidden subcommand.
struct Sample {
    CLI::App app{"sample", "caretz"};
    std::string text;
    bool flag = false;

    Sample() {
        app.add_option("--profile", text, "Use a profile")->type_name(kProfileValue);
        app.add_option("--permission-timeout", text, "Deny after this long")
            ->type_name(kDurationValue);
        app.add_option("--config", text, "Config file")->type_name(kFileValue);
        app.add_option("--provider", text, "Model API")
            ->check(CLI::IsMember({"openai", "anthropic"}));
        app.add_option("-p,--prompt", text, "The host's first prompt");
        app.add_flag("--plan", flag, "Plan mode");
        CLI::App* exec = app.add_subcommand("exec", "Run one command");
        exec->prefix_command();
        exec->add_flag("--json", flag, "Print JSON");
        app.add_subcommand("doctor", "Check this machine");
        app.add_subcommand("completions", "")->group("");
    }
};

const CompletionOption* option_named(const CompletionCommand& command, const std::string& name) {
    for (const auto& option : command.options)
        for (const auto& n : option.names)
            if (n == name) return &option;
    return nullptr;
}

}  // namespace

TEST_CASE("completions read the command line's options, values and subcommands") {
    Sample sample;
    auto commands = completion_commands(sample.app);
    REQUIRE(commands.size() == 3);
    const CompletionCommand& root = commands[0];
    CHECK(root.path == "caretz");
    CHECK(root.children == std::vector<std::string>{"exec", "doctor"});
    CHECK(commands[1].path == "caretz exec");
    CHECK(commands[1].runs_command);
    CHECK(commands[2].path == "caretz doctor");
    CHECK_FALSE(root.runs_command);

    REQUIRE(option_named(root, "--profile"));
    CHECK(option_named(root, "--profile")->value == kProfileValue);
    CHECK(option_named(root, "--permission-timeout")->value == kDurationValue);
    CHECK(option_named(root, "--config")->value == kFileValue);
    CHECK(option_named(root, "--provider")->choices ==
          std::vector<std::string>{"openai", "anthropic"});
    CHECK(option_named(root, "-p") == option_named(root, "--prompt"));
    CHECK(option_named(root, "--prompt")->value == "TEXT");
    CHECK(option_named(root, "--plan")->value.empty());
    CHECK(option_named(root, "--help"));
    CHECK_FALSE(option_named(root, "--json"));
    CHECK(option_named(commands[1], "--json"));
}

TEST_CASE("each shell's script carries every option and subcommand, hidden ones left out") {
    Sample sample;
    for (const std::string shell : {"bash", "zsh", "fish"}) {
        INFO(shell);
        std::string script = completion_script(sample.app, shell);
        for (const char* word :
             {"permission-timeout", "profile", "provider", "prompt", "plan", "exec", "doctor",
              "openai anthropic", "90s 5m 1h", "completions profiles"})
            CHECK_THAT(script, Contains(word));
        CHECK_THAT(script, !Contains("'completions'") && !Contains(" completions)"));
    }
    CHECK_THAT(completion_script(sample.app, "bash"), Contains("complete -F _caretz caretz"));
    CHECK_THAT(completion_script(sample.app, "zsh"), Contains("#compdef caretz"));
    // Quotes in help text stay inside the quoting of each shell.
    CHECK_THAT(completion_script(sample.app, "zsh"), Contains("The host'\\''s first prompt"));
    CHECK_THAT(completion_script(sample.app, "fish"), Contains("'The host\\'s first prompt'"));
}
